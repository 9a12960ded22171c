/** Calls to tollgate's /dashboard/api: JSON both ways, the session cookie, the CSRF token on changes. */

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

let csrfToken = ''
let onSignedOut: () => void = () => {}

/** Called whenever an answer says the session is gone (401), to show the sign-in form again. */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback
}

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET'
  const headers: Record<string, string> = { accept: 'application/json' }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  const response = await fetch(`/dashboard/api/${path}`, {
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

type Session = { signedIn: true; csrfToken: string; expiresAt: number } | { signedIn: false }

/** True when the browser holds a live session (and its CSRF token is now known). */
export async function loadSession(): Promise<boolean> {
  const session = await api<Session>('session')
  csrfToken = session.signedIn ? session.csrfToken : ''
  return session.signedIn
}

export async function signIn(token: string): Promise<void> {
  const session = await api<Session>('session', { method: 'POST', body: { token } })
  csrfToken = session.signedIn ? session.csrfToken : ''
}

export async function signOut(): Promise<void> {
  await api('session', { method: 'DELETE' })
  csrfToken = ''
}

/** The message to show for a failed call: the admin API's own (the CLI's) when it gave one. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
