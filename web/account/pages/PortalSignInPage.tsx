import { useState } from 'preact/hooks'
import { ApiError, messageOf } from '../../api.ts'
import { type Session, signIn } from '../accountApi.ts'

/** Sign-in with the account token the operator handed over, or through the identity provider when one is set up. */
export function PortalSignInPage(props: { oidc: boolean; onSignedIn: (session: Session) => void }) {
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  async function submit(event: SubmitEvent) {
    event.preventDefault()
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '').trim()
    setBusy(true)
    setError(undefined)
    try {
      props.onSignedIn(await signIn(token))
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'Wrong, replaced or revoked account token.'
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
      <h1>tollgate account</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          Account token
          <input name="token" type="password" autoComplete="current-password" placeholder="tga_…" required />
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
      {props.oidc && (
        <p>
          <a class="button" href="/account/api/oidc/start">
            Sign in with your identity provider
          </a>
        </p>
      )}
      <p class="hint">The account token (tga_…) comes from the gateway's operator.</p>
    </main>
  )
}
