/**
 * Calls to tollgate's /account/api for the portal: JSON both ways, the session cookie, and the
 * session's CSRF token on every call that changes something (the account API refuses those
 * without it, 403).
 */
import { ApiError } from '../api.ts'

let csrfToken = ''
let onSignedOut: () => void = () => {}

/** Called whenever an answer says the session is gone (401), to show the sign-in form again. */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback
}

export async function accountApi<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const method = init.method ?? 'GET'
  const headers: Record<string, string> = { accept: 'application/json' }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  const response = await fetch(`/account/api/${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  })
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } }
  if (!response.ok) {
    if (response.status === 401 && path !== 'session') onSignedOut()
    throw new ApiError(response.status, body.error?.message ?? `HTTP ${response.status}`)
  }
  return body as T
}

/** GET /account/api/session: signed in (to which account), or not and whether an identity provider is offered. */
export type Session =
  | { signedIn: true; account: string; csrfToken: string; expiresAt: string }
  | { signedIn: false; oidc?: boolean }

/** The browser's session, if it holds one (its CSRF token is then known to later calls). */
export async function loadSession(): Promise<Session> {
  const session = await accountApi<Session>('session')
  csrfToken = session.signedIn ? session.csrfToken : ''
  return session
}

export async function signIn(token: string): Promise<Session> {
  const session = await accountApi<Session>('session', { method: 'POST', body: { token } })
  csrfToken = session.signedIn ? session.csrfToken : ''
  return session
}

export async function signOut(): Promise<void> {
  await accountApi('session', { method: 'DELETE' })
  csrfToken = ''
}
