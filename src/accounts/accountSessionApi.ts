import { Buffer } from 'node:buffer'
import { timingSafeEqual } from 'node:crypto'
import type { Account } from '../auth/apiKey.ts'
import { AccountCsrfError, AccountTokenRequiredError } from '../errors/accountErrors.ts'
import { AdminRequestError } from '../errors/adminErrors.ts'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { readCookie } from '../formats/readCookie.ts'
import type { AccountApiDeps, AccountApiRequest, AccountApiResponse, AccountCall } from './accountApiTypes.ts'
import { accountSessionCookie, accountSessionCookieHeader } from './createAccountSessions.ts'

/** The limiter's per-key bucket every wrong account token counts against: no key is named. */
const accountTokenKeyId = 0

const csrfHeader = 'x-csrf-token'

/**
 * The account a request signs in to: by `Authorization: Bearer <account token>` (scripts), else
 * by the portal's session cookie, when every request but a GET must also carry the session's CSRF
 * token. An address that sent too many wrong tokens is refused before its token is looked at; a
 * request without a token is refused uncounted.
 */
export async function signInRequest(deps: AccountApiDeps, request: AccountApiRequest): Promise<Account> {
  if (request.authorization === undefined) {
    const cookie = readCookie(request.headers.cookie, accountSessionCookie)
    if (cookie !== undefined) return signInBySession(deps, request, cookie)
  }
  refuseLimited(deps, request)
  const token = bearerToken(request.authorization)
  if (token === undefined) throw new AccountTokenRequiredError()
  return accountOfToken(deps, request, token)
}

async function signInBySession(
  deps: AccountApiDeps,
  request: AccountApiRequest,
  cookie: string,
): Promise<Account> {
  const session = deps.sessions.verify(cookie)
  const account = session && (await deps.accounts.accountOfSession(session))
  if (!session || !account) throw new AccountTokenRequiredError()
  if (
    request.method !== 'GET' &&
    request.method !== 'HEAD' &&
    !sameText(header(request, csrfHeader), session.csrfToken)
  ) {
    throw new AccountCsrfError()
  }
  return account
}

/**
 * /account/api/session, the portal's sign-in: POST `{"token"}` starts a session (a cookie), GET
 * says whether the browser holds one (and its CSRF token), DELETE ends it.
 */
export async function sessionResource(call: Omit<AccountCall, 'account'>): Promise<AccountApiResponse> {
  const { deps, request, url } = call
  if (url.pathname.replace(/\/+$/, '') !== '/account/api/session') throw new RouteNotFoundError()
  const cookie = readCookie(request.headers.cookie, accountSessionCookie)
  switch (request.method) {
    case 'POST':
      return signIn(deps, request)
    case 'GET':
    case 'HEAD': {
      const session = deps.sessions.verify(cookie)
      const account = session && (await deps.accounts.accountOfSession(session))
      // asked by every page load: not signed in is an answer, not an error
      if (!session || !account) return answer(200, { signedIn: false, oidc: deps.oidc !== undefined })
      return answer(200, signedIn(account, session))
    }
    case 'DELETE': {
      const session = deps.sessions.verify(cookie)
      if (session && sameText(header(request, csrfHeader), session.csrfToken)) deps.sessions.signOut(cookie)
      return answer(
        200,
        { signedIn: false },
        { 'set-cookie': accountSessionCookieHeader('', 0, isSecure(request)) },
      )
    }
    default:
      // as the admin API answers a method a path does not have
      throw new RouteNotFoundError()
  }
}

async function signIn(deps: AccountApiDeps, request: AccountApiRequest): Promise<AccountApiResponse> {
  // another site's page must not sign a browser in to an account of its choosing (login CSRF): a
  // browser names the page's origin on every POST; a script that sends none is no browser's
  if (isCrossOrigin(request)) throw new AdminRequestError('cross-origin request refused')
  refuseLimited(deps, request)
  let token: unknown
  try {
    token = (JSON.parse(request.body) as { token?: unknown } | null)?.token
  } catch {
    throw new AdminRequestError('the body is not JSON')
  }
  if (typeof token !== 'string') throw new AdminRequestError('token: expected the account token, a string')
  const account = await accountOfToken(deps, request, token.trim())
  const { cookie, session } = deps.sessions.signIn(account)
  const maxAgeSeconds = Math.floor(deps.sessions.ttlMs / 1000)
  return answer(200, signedIn(account, session), {
    'set-cookie': accountSessionCookieHeader(cookie, maxAgeSeconds, isSecure(request)),
  })
}

function signedIn(account: Account, session: { csrfToken: string; expiresAtMs: number }) {
  return {
    signedIn: true,
    account: account.name,
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAtMs).toISOString(),
  }
}

/** An Origin header that is not this host's (the portal's page is served from the same host). */
function isCrossOrigin(request: AccountApiRequest): boolean {
  const origin = header(request, 'origin')
  if (origin === undefined) return false
  const host = header(request, 'host')
  try {
    return host === undefined || new URL(origin).host !== host.toLowerCase()
  } catch {
    return true
  }
}

function refuseLimited(deps: AccountApiDeps, request: AccountApiRequest): void {
  const waitMs = deps.tokenFailures.retryAfterMs(accountTokenKeyId, request.clientAddress)
  if (waitMs > 0) throw new AuthRateLimitError(waitMs)
}

/** The account of a token; a wrong one is counted against the client address. */
async function accountOfToken(
  deps: AccountApiDeps,
  request: AccountApiRequest,
  token: string,
): Promise<Account> {
  const account = await deps.accounts.accountOfToken(token)
  if (account) return account
  deps.tokenFailures.recordFailure(accountTokenKeyId, request.clientAddress)
  throw new AccountTokenRequiredError()
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.toLowerCase().startsWith('bearer ')) return undefined
  return authorization.slice(7).trim()
}

/** The session cookie is Secure when the connection is TLS, or a proxy in front says it was. */
function isSecure(request: AccountApiRequest): boolean {
  return request.secure === true || header(request, 'x-forwarded-proto') === 'https'
}

function header(request: AccountApiRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function answer(status: number, body: unknown, headers: Record<string, string> = {}): AccountApiResponse {
  return { status, body, headers: { 'cache-control': 'no-store', ...headers } }
}

/** A CSRF token compared in constant time (its length is no secret: every token has the same). */
function sameText(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
