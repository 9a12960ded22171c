import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import {
  AdminRequestError,
  AdminTokenRequiredError,
  DashboardNotBuiltError,
  SignInLinkError,
} from '../errors/adminErrors.ts'
import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { readCookie } from '../formats/readCookie.ts'
import type { FeeIndexer } from '../gas/createFeeIndexer.ts'
import type { AdminRequest, AdminResponse } from './adminApiTypes.ts'
import { adminTokenKeyId } from './createAdminTokenFailures.ts'
import type { DashboardSessions } from './createDashboardSessions.ts'
import type { DashboardAssets } from './loadDashboardAssets.ts'
import { toGasView } from './toGasView.ts'
import { assetAnswer, dataAnswer, errorAnswer, jsonAnswer, pageAnswer, type WebAnswer } from './webAnswers.ts'

export type DashboardRequest = {
  method: string
  url: string
  headers: Readonly<Record<string, string | string[] | undefined>>
  body: string
  clientAddress: string | undefined
  /** The connection is TLS: the session cookie is then `Secure`. */
  secure: boolean
}

export type DashboardDeps = {
  /** The admin token's answers: the key and usage operations go through the admin API itself. */
  admin: (request: AdminRequest) => Promise<AdminResponse>
  token: string
  sessions: DashboardSessions
  /** Wrong tokens at sign-in, counted per client address with /admin's (createAdminTokenFailures). */
  signInFailures: AuthFailureLimiter
  /** The overview page's figures: the last hour per minute, upstreams and caches now. */
  overview: () => Promise<unknown>
  indexers: ReadonlyMap<number, FeeIndexer>
  /** Undefined when the dashboard was not built: /dashboard then answers DashboardNotBuiltError. */
  assets: DashboardAssets | undefined
}

const cookieName = 'tollgate_session'
const csrfHeader = 'x-csrf-token'

/**
 * /dashboard: the pages (one HTML page and its hashed assets) and their JSON under /dashboard/api.
 * Sign-in with the admin token gives an HttpOnly, SameSite=Strict session cookie; every request
 * that changes state must also come from this origin (Origin) and carry the session's CSRF token.
 * A sign-in link, `/dashboard?token=<admin token>` (the embedded devnet's banner prints one), signs
 * the browser in the same way and sends it on to `/dashboard`, without the token in its address.
 * Key and usage requests are the admin API's own (/dashboard/api/admin/... is /admin/...), so the
 * dashboard has the CLI's validation and messages and shows only what the admin API shows.
 */
export async function handleDashboard(deps: DashboardDeps, request: DashboardRequest): Promise<WebAnswer> {
  try {
    return await route(deps, request)
  } catch (err) {
    return errorAnswer(err)
  }
}

async function route(deps: DashboardDeps, request: DashboardRequest): Promise<WebAnswer> {
  const url = new URL(request.url, 'http://dashboard')
  const path = url.pathname.replace(/\/+$/, '')
  const { method } = request

  if (path === '/dashboard') {
    if (method !== 'GET' && method !== 'HEAD') throw new HttpMethodNotAllowedError('GET')
    const linkToken = url.searchParams.get('token')
    if (linkToken !== null) return signInByLink(deps, request, linkToken)
    if (!deps.assets) throw new DashboardNotBuiltError()
    return pageAnswer(deps.assets.index)
  }
  if (path.startsWith('/dashboard/assets/'))
    return assetAnswer(deps.assets?.assets.get(path.slice('/dashboard/assets/'.length)))
  if (!path.startsWith('/dashboard/api/')) throw new RouteNotFoundError()
  const api = path.slice('/dashboard/api/'.length)
  const cookie = readCookie(request.headers.cookie, cookieName)
  const changesState = method !== 'GET' && method !== 'HEAD'
  if (changesState && !isSameOrigin(request)) throw new AdminRequestError('cross-origin request refused')

  if (api === 'session') {
    if (method === 'POST') return signIn(deps, request)
    const session = deps.sessions.verify(cookie)
    if (method === 'DELETE') {
      if (session && header(request, csrfHeader) === session.csrfToken) deps.sessions.signOut(cookie)
      return jsonAnswer(200, { signedIn: false }, { 'set-cookie': sessionCookie(request, '', 0) })
    }
    // asked by every page load: not signed in is an answer, not an error
    if (!session) return jsonAnswer(200, { signedIn: false })
    return jsonAnswer(200, { signedIn: true, csrfToken: session.csrfToken, expiresAt: session.expiresAtMs })
  }

  const session = deps.sessions.verify(cookie)
  if (!session) throw new AdminTokenRequiredError()
  if (changesState && header(request, csrfHeader) !== session.csrfToken) {
    throw new AdminRequestError('missing or wrong CSRF token: reload the page')
  }
  if (api === 'overview' && method === 'GET') return jsonAnswer(200, await deps.overview())
  if (api === 'gas' && method === 'GET') return jsonAnswer(200, [...deps.indexers.values()].map(toGasView))
  if (api === 'admin' || api.startsWith('admin/')) {
    const answer = await deps.admin({
      method,
      url: `/${api}${url.search}`,
      authorization: `Bearer ${deps.token}`,
      body: request.body,
      // signed in already: the admin token's limiter has nothing to count
      clientAddress: undefined,
    })
    // an export (NDJSON): saved as a file by the page's link
    if (answer.contentType)
      return dataAnswer(answer.status, answer.contentType, String(answer.body), answer.headers)
    return jsonAnswer(answer.status, answer.body)
  }
  throw new RouteNotFoundError()
}

function signIn(deps: DashboardDeps, request: DashboardRequest): WebAnswer {
  refuseLimited(deps, request)
  let token: unknown
  try {
    token = (JSON.parse(request.body) as { token?: unknown }).token
  } catch {
    throw new AdminRequestError('the body is not JSON')
  }
  const { cookie, session } = startSession(deps, request, token, new AdminTokenRequiredError())
  return jsonAnswer(
    200,
    { signedIn: true, csrfToken: session.csrfToken, expiresAt: session.expiresAtMs },
    { 'set-cookie': sessionCookie(request, cookie, Math.floor(deps.sessions.ttlMs / 1000)) },
  )
}

/**
 * `GET /dashboard?token=...`: the sign-in a link does, with the same limiter, then a redirect to the
 * page (303: the address bar and the history keep `/dashboard`, without the token).
 */
function signInByLink(deps: DashboardDeps, request: DashboardRequest, token: string): WebAnswer {
  refuseLimited(deps, request)
  const { cookie } = startSession(deps, request, token, new SignInLinkError())
  return dataAnswer(303, 'text/plain; charset=utf-8', '', {
    location: '/dashboard',
    'set-cookie': sessionCookie(request, cookie, Math.floor(deps.sessions.ttlMs / 1000)),
  })
}

/** An address that sent too many wrong admin tokens is refused before its token is looked at. */
function refuseLimited(deps: DashboardDeps, request: DashboardRequest): void {
  const waitMs = deps.signInFailures.retryAfterMs(adminTokenKeyId, request.clientAddress)
  if (waitMs > 0) throw new AuthRateLimitError(waitMs)
}

/** A new session for the admin token; another token is counted against the address and refused. */
function startSession(deps: DashboardDeps, request: DashboardRequest, token: unknown, refusal: Error) {
  const signedIn = typeof token === 'string' ? deps.sessions.signIn(token) : undefined
  if (signedIn) return signedIn
  deps.signInFailures.recordFailure(adminTokenKeyId, request.clientAddress)
  throw refusal
}

/** HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure over TLS. */
function sessionCookie(request: DashboardRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.secure || header(request, 'x-forwarded-proto') === 'https'
  return [
    `${cookieName}=${value}`,
    'Path=/dashboard',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ')
}

/** A browser sends Origin with every POST, PATCH and DELETE: it must be this host. */
function isSameOrigin(request: DashboardRequest): boolean {
  const origin = header(request, 'origin')
  const host = header(request, 'host')
  if (origin === undefined || host === undefined) return false
  try {
    return new URL(origin).host === host.toLowerCase()
  } catch {
    return false
  }
}

function header(request: DashboardRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}
