/** A new key, and its secret if it has one: shown once, kept only in this component's state. */
export function OnceSecret(props: {
  title: string
  keyValue: string
  secret: string | undefined
  onDone: () => void
}) {
  return (
    <div class="once" role="status" aria-live="polite">
      <h3>{props.title}</h3>
      <p>
        Key: <code data-testid="created-key">{props.keyValue}</code>
      </p>
      {props.secret && (
        <p>
          Secret: <code data-testid="created-secret">{props.secret}</code>
          <br />
          <strong>Shown once: store it now.</strong> tollgate keeps only its hash.
        </p>
      )}
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </div>
  )
}
