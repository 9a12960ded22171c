import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { OidcAnswerRejectedError, OidcStateError } from '../errors/oidcErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import { readCookie } from '../formats/readCookie.ts'
import type { AccountApiResponse, AccountCall, OidcSignIn } from './accountApiTypes.ts'
import { accountSessionCookieHeader } from './createAccountSessions.ts'
import { accountNamesOfClaim, matchOidcAccount } from './matchOidcAccount.ts'
import {
  oidcStateCookie,
  oidcStateCookieHeader,
  oidcStateTtlMs,
  openOidcState,
  sealOidcState,
} from './oidcStateCookie.ts'

/** Where a signed-in person lands: the account portal. */
const portalPath = '/account/'

/** The limiter's bucket for wrong sign-ins: the one wrong account tokens count in (no key is named). */
const signInFailureKeyId = 0

/**
 * /account/api/oidc/start and /account/api/oidc/callback, answered before sign-in: the authorization
 * code flow with PKCE (S256), state and nonce, kept between the two in a signed cookie so that any
 * instance can answer the callback. Not found when no identity provider is configured.
 */
export async function oidcResource(call: Omit<AccountCall, 'account'>): Promise<AccountApiResponse> {
  const { deps, request, url } = call
  const oidc = deps.oidc
  const step = url.pathname.replace(/\/+$/, '').slice('/account/api/oidc'.length)
  if (!oidc || (step !== '/start' && step !== '/callback')) throw new RouteNotFoundError()
  if (request.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
  const secure = oidc.secure || request.secure === true
  try {
    return step === '/start' ? await start(oidc, deps.now(), secure) : await callback(call, oidc, secure)
  } catch (err) {
    oidc.onRefused(err)
    if (err instanceof OidcStateError || err instanceof OidcAnswerRejectedError)
      deps.tokenFailures.recordFailure(signInFailureKeyId, request.clientAddress)
    // the pending sign-in is spent whatever went wrong: the browser starts again
    const answer = toWireError(err, 'admin')
    return {
      status: answer.httpStatus,
      body: answer.body,
      headers: { ...noStore, ...answer.headers, 'set-cookie': oidcStateCookieHeader('', 0, secure) },
    }
  }
}

async function start(oidc: OidcSignIn, nowMs: number, secure: boolean): Promise<AccountApiResponse> {
  // loaded on the first sign-in, as createOidcClient loads it: a gateway without one never carries it
  const { randomNonce, randomPKCECodeVerifier, randomState } = await import('openid-client')
  const pending = {
    state: randomState(),
    nonce: randomNonce(),
    codeVerifier: randomPKCECodeVerifier(),
    expiresAtMs: nowMs + oidcStateTtlMs,
  }
  const location = (await oidc.client.authorizationUrl(pending)).href
  const cookie = sealOidcState(pending, oidc.stateMacKey)
  return redirect(location, oidcStateCookieHeader(cookie, oidcStateTtlMs / 1000, secure))
}

async function callback(
  call: Omit<AccountCall, 'account'>,
  oidc: OidcSignIn,
  secure: boolean,
): Promise<AccountApiResponse> {
  const { deps, request, url } = call
  const waitMs = deps.tokenFailures.retryAfterMs(signInFailureKeyId, request.clientAddress)
  if (waitMs > 0) throw new AuthRateLimitError(waitMs)
  const pending = openOidcState(
    readCookie(request.headers.cookie, oidcStateCookie),
    oidc.stateMacKey,
    deps.now(),
  )
  if (!pending) throw new OidcStateError({ logDetails: 'no state cookie, or a wrong or expired one' })
  if (url.searchParams.get('state') !== pending.state)
    throw new OidcStateError({ logDetails: "the callback's state is not the cookie's" })
  const claims = await oidc.client.claimsOf(url.searchParams, pending)
  const names = accountNamesOfClaim(claims, oidc.claim)
  const account = await matchOidcAccount(names, oidc.claim, oidc.findAccount)
  const { cookie } = deps.sessions.signIn(account)
  const maxAgeSeconds = Math.floor(deps.sessions.ttlMs / 1000)
  // the session's cookie, and the state's cleared: its code is spent
  return redirect(portalPath, [
    accountSessionCookieHeader(cookie, maxAgeSeconds, secure),
    oidcStateCookieHeader('', 0, secure),
  ])
}

const noStore = { 'cache-control': 'no-store' }

function redirect(location: string, setCookie: string | readonly string[]): AccountApiResponse {
  return { status: 302, body: { location }, headers: { ...noStore, location, 'set-cookie': setCookie } }
}
