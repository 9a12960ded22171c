import type { AlertAdmin } from '../alerts/createAlertAdmin.ts'
import { handleAccountAlerts } from '../alerts/handleAccountAlerts.ts'
import type { Account } from '../auth/apiKey.ts'
import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { toKeyView } from '../auth/keyView.ts'
import { AccountTokenRequiredError } from '../errors/accountErrors.ts'
import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import { usageDays } from '../metering/usageBounds.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import type { AccountAdmin } from './createAccountAdmin.ts'
import { getAccountUsage } from './getAccountUsage.ts'

export type AccountApiRequest = {
  method: string
  url: string
  authorization: string | undefined
  /** The request's body as text (bounded by the server), '' when none. */
  body: string
  /** The request's headers (cookies, CSRF tokens, user agent). */
  headers: Readonly<Record<string, string | string[] | undefined>>
  /** Whom wrong tokens are counted against. */
  clientAddress: string | undefined
}
export type AccountApiResponse = { status: number; body: unknown; headers?: Record<string, string> }

export type AccountApiDeps = {
  accounts: AccountAdmin
  /** Usage alert settings and deliveries. */
  alerts: AlertAdmin
  usage: UsageStore
  /** Pending usage is written before usage is read, so answers include the latest calls. */
  flushUsage: () => Promise<void>
  now: () => number
  /** Wrong account tokens, per client address (createAccountTokenFailures). */
  tokenFailures: AuthFailureLimiter
}

/** The limiter's per-key bucket every wrong account token counts against: no key is named. */
const accountTokenKeyId = 0

/**
 * The account API under /account/api, for a key holder's scripts: `Authorization: Bearer <account
 * token>` signs in to one account, and every answer is read for that account alone (its keys, its
 * usage). Errors are `{"error":{"message"}}`, as the admin API's.
 */
export async function handleAccountApi(
  deps: AccountApiDeps,
  request: AccountApiRequest,
): Promise<AccountApiResponse> {
  try {
    const url = new URL(request.url, 'http://account')
    const resource = url.pathname.replace(/\/+$/, '').slice('/account/api/'.length).split('/')[0] ?? ''
    const open = Object.hasOwn(publicResources, resource) ? publicResources[resource] : undefined
    if (open) return await open({ request, url, deps })
    const account = await signIn(deps, request)
    const handler = Object.hasOwn(resources, resource) ? resources[resource] : undefined
    if (!handler) throw new RouteNotFoundError()
    return { status: 200, body: await handler({ account, request, url, deps }) }
  } catch (err) {
    const answer = toWireError(err, 'admin')
    return { status: answer.httpStatus, body: answer.body, headers: answer.headers }
  }
}

/**
 * The account the bearer token signs in to. An address that sent too many wrong tokens is refused
 * before its token is looked at; a request without a token is refused uncounted.
 */
async function signIn(deps: AccountApiDeps, request: AccountApiRequest): Promise<Account> {
  const waitMs = deps.tokenFailures.retryAfterMs(accountTokenKeyId, request.clientAddress)
  if (waitMs > 0) throw new AuthRateLimitError(waitMs)
  const token = bearerToken(request.authorization)
  if (token === undefined) throw new AccountTokenRequiredError()
  const account = await deps.accounts.accountOfToken(token)
  if (!account) {
    deps.tokenFailures.recordFailure(accountTokenKeyId, request.clientAddress)
    throw new AccountTokenRequiredError()
  }
  return account
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.toLowerCase().startsWith('bearer ')) return undefined
  return authorization.slice(7).trim()
}

/** What a resource's handler is given: the signed-in account, the request, its URL parsed. */
export type AccountCall = { account: Account; request: AccountApiRequest; url: URL; deps: AccountApiDeps }

/**
 * The account API's resources by their path below /account/api/ (`keys/web` is `keys` with `web`
 * left in `call.url`): each answers its methods and throws HttpMethodNotAllowedError for the rest.
 */
const resources: Record<string, (call: AccountCall) => Promise<unknown>> = {
  usage: getUsage,
  keys: getKeys,
  account: getAccount,
  alerts: handleAccountAlerts,
}

/**
 * Resources answered before sign-in (signing in itself, an identity provider's redirects): each
 * answers whole responses, status and headers included.
 */
const publicResources: Record<string, (call: Omit<AccountCall, 'account'>) => Promise<AccountApiResponse>> =
  {}

function onlyGet(call: AccountCall): void {
  if (call.url.pathname.replace(/\/+$/, '').split('/').length > 4) throw new RouteNotFoundError()
  if (call.request.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
}

async function getUsage(call: AccountCall): Promise<unknown> {
  onlyGet(call)
  const { deps, account } = call
  // checked before anything is read or written
  const days = parseWholeNumber('days', call.url.searchParams.get('days'), usageDays)
  await deps.flushUsage()
  const keys = await deps.accounts.keysOf(account)
  const usage = await getAccountUsage(deps.usage, keys, { days, nowMs: deps.now() })
  return { account: account.name, days, usage }
}

async function getKeys(call: AccountCall): Promise<unknown> {
  onlyGet(call)
  const { deps, account } = call
  return { account: account.name, keys: (await deps.accounts.keysOf(account)).map(toKeyView) }
}

async function getAccount(call: AccountCall): Promise<unknown> {
  onlyGet(call)
  const { deps, account } = call
  await deps.flushUsage()
  const details = await deps.accounts.show(account.name)
  return {
    account: account.name,
    plan: details.account.plan,
    dailyCredits: details.dailyCredits,
    creditsPerSecond: details.creditsPerSecond,
    creditsUsedToday: details.creditsUsedToday,
    resetsAt: details.resetsAt.toISOString(),
  }
}
