/**
 * A new key, and its secret if it has one (or a secret alone: a webhook's signing secret): shown
 * once, kept only in this component's state.
 */
export function OnceSecret(props: {
  title: string
  keyValue?: string
  secret: string | undefined
  /** What is kept of the secret (default: only its hash). */
  kept?: string
  onDone: () => void
}) {
  return (
    <div class="once" role="status" aria-live="polite">
      <h3>{props.title}</h3>
      {props.keyValue !== undefined && (
        <p>
          Key: <code data-testid="created-key">{props.keyValue}</code>
        </p>
      )}
      {props.secret && (
        <p>
          Secret: <code data-testid="created-secret">{props.secret}</code>
          <br />
          <strong>Shown once: store it now.</strong> {props.kept ?? 'tollgate keeps only its hash.'}
        </p>
      )}
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </div>
  )
}
