/**
 * Calls to tollgate's /account/api for the portal: JSON both ways, the session cookie, and the
 * session's CSRF token on every call that changes something (the account API refuses those
 * without it, 403).
 */
import { createApiClient } from '../api.ts'

const portal = createApiClient('/account/api')
export const accountApi = portal.call
export const whenSignedOut = portal.whenSignedOut

/** GET /account/api/session: signed in (to which account), or not and whether an identity provider is offered. */
export type Session =
  | { signedIn: true; account: string; csrfToken: string; expiresAt: string }
  | { signedIn: false; oidc?: boolean }

/** The browser's session, if it holds one (its CSRF token is then known to later calls). */
export async function loadSession(): Promise<Session> {
  const session = await accountApi<Session>('session')
  portal.takeCsrfToken(session.signedIn ? session.csrfToken : '')
  return session
}

export async function signIn(token: string): Promise<Session> {
  const session = await accountApi<Session>('session', { method: 'POST', body: { token } })
  portal.takeCsrfToken(session.signedIn ? session.csrfToken : '')
  return session
}

export async function signOut(): Promise<void> {
  await accountApi('session', { method: 'DELETE' })
  portal.takeCsrfToken('')
}
