import { useState } from 'preact/hooks'
import { ApiError, messageOf, signIn } from '../api.ts'

export function SignInPage(props: { onSignedIn: () => void }) {
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  async function submit(event: SubmitEvent) {
    event.preventDefault()
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '')
    setBusy(true)
    setError(undefined)
    try {
      await signIn(token)
      props.onSignedIn()
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'Wrong admin token.'
          : err instanceof ApiError && err.status === 429
            ? 'Too many wrong tokens: try again in a minute.'
            : messageOf(err),
      )
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="sign-in">
      <h1>tollgate dashboard</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          Admin token
          <input name="token" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="hint">The token is admin.token (or TOLLGATE_ADMIN_TOKEN) in the gateway's config.</p>
    </main>
  )
}
