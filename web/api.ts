/** Calls to tollgate's /dashboard/api: JSON both ways, the session cookie, the CSRF token on changes. */

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/**
 * A client of one of tollgate's session APIs (`/dashboard/api`, `/account/api`): JSON both ways, the
 * session cookie, the session's CSRF token on every call that changes something, and a callback for
 * an answer that says the session is gone (401).
 */
export function createApiClient(base: string) {
  let csrfToken = ''
  let onSignedOut: () => void = () => {}
  async function call<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
    const method = init.method ?? 'GET'
    const headers: Record<string, string> = { accept: 'application/json' }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    if (method !== 'GET') headers['x-csrf-token'] = csrfToken
    const response = await fetch(`${base}/${path}`, {
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
  return {
    call,
    /** The session's CSRF token, as the session answer gave it ('' when signed out). */
    takeCsrfToken(token: string): void {
      csrfToken = token
    },
    /** Called whenever an answer says the session is gone (401), to show the sign-in form again. */
    whenSignedOut(callback: () => void): void {
      onSignedOut = callback
    },
  }
}

const dashboard = createApiClient('/dashboard/api')
export const api = dashboard.call
export const whenSignedOut = dashboard.whenSignedOut

type Session = { signedIn: true; csrfToken: string; expiresAt: number } | { signedIn: false }

/** True when the browser holds a live session (and its CSRF token is now known). */
export async function loadSession(): Promise<boolean> {
  const session = await api<Session>('session')
  dashboard.takeCsrfToken(session.signedIn ? session.csrfToken : '')
  return session.signedIn
}

export async function signIn(token: string): Promise<void> {
  const session = await api<Session>('session', { method: 'POST', body: { token } })
  dashboard.takeCsrfToken(session.signedIn ? session.csrfToken : '')
}

export async function signOut(): Promise<void> {
  await api('session', { method: 'DELETE' })
  dashboard.takeCsrfToken('')
}

/** The message to show for a failed call: the admin API's own (the CLI's) when it gave one. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
