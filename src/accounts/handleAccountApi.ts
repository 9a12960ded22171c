import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { AccountApiRateError } from '../errors/limitErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import { usageDays } from '../metering/usageBounds.ts'
import { TextAnswer } from '../requestLog/readRequestLog.ts'
import { AccountAnswer } from './accountAnswer.ts'
import type { AccountApiDeps, AccountApiRequest, AccountApiResponse, AccountCall } from './accountApiTypes.ts'
import { keysResource } from './accountKeysApi.ts'
import { sessionResource, signInRequest } from './accountSessionApi.ts'
import { handleAccountAlerts } from './alertsResource.ts'
import { getAccountUsage } from './getAccountUsage.ts'
import { oidcResource } from './oidcApi.ts'
import { getRequests } from './requestLogResource.ts'

/**
 * The account API under /account/api, for a key holder's scripts and the portal: `Authorization:
 * Bearer <account token>` or the portal's session cookie (signInRequest) signs in to one account,
 * and every answer is read for that account alone (its keys, its usage). Errors are `{"error":{"message"}}`, as the admin API's.
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
    const account = await signInRequest(deps, request)
    const waitMs = deps.requestRate.take(account.id)
    if (waitMs > 0) throw new AccountApiRateError(waitMs)
    const handler = Object.hasOwn(resources, resource) ? resources[resource] : undefined
    if (!handler) throw new RouteNotFoundError()
    const answer = await handler({ account, request, url, deps })
    if (answer instanceof TextAnswer)
      return { status: 200, body: answer.text, contentType: answer.contentType, headers: answer.headers }
    return answer instanceof AccountAnswer
      ? { status: answer.status, body: answer.body }
      : { status: 200, body: answer }
  } catch (err) {
    const answer = toWireError(err, 'admin')
    return { status: answer.httpStatus, body: answer.body, headers: answer.headers }
  }
}

/**
 * The account API's resources by their path below /account/api/ (`keys/web` is `keys` with `web`
 * left in `call.url`): each answers its methods and throws HttpMethodNotAllowedError (or, below
 * `keys`, RouteNotFoundError, as the admin API does) for the rest. A handler's value is answered 200,
 * an AccountAnswer with its own status.
 */
const resources: Record<string, (call: AccountCall) => Promise<unknown>> = {
  usage: getUsage,
  keys: keysResource,
  account: getAccount,
  requests: getRequests,
  alerts: handleAccountAlerts,
}

/**
 * Resources answered before sign-in (signing in itself, an identity provider's redirects): each
 * answers whole responses, status and headers included.
 */
const publicResources: Record<string, (call: Omit<AccountCall, 'account'>) => Promise<AccountApiResponse>> = {
  session: sessionResource,
  oidc: oidcResource,
}

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
