import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { readRequests, summarizeRequests, TextAnswer } from '../requestLog/readRequestLog.ts'
import type { AccountCall } from './accountApiTypes.ts'

/**
 * GET /account/api/requests (the signed-in account's request log, filtered, newest first; NDJSON
 * with `format=ndjson`) and GET /account/api/requests/summary (its errors, refusals and latency).
 * Every read is of the account's own rows: its id is the query's, whatever the query string says.
 */
export async function getRequests(call: AccountCall): Promise<unknown> {
  const parts = call.url.pathname.replace(/\/+$/, '').split('/')
  const summary = parts[4] === 'summary'
  if (parts.length > 5 || (parts.length === 5 && !summary)) throw new RouteNotFoundError()
  if (call.request.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
  const { deps, account } = call
  if (summary)
    return {
      account: account.name,
      ...(await summarizeRequests(deps.requestLog, call.url.searchParams, account.id)),
    }
  const keys = await deps.accounts.keysOf(account)
  const answer = await readRequests(deps.requestLog, call.url.searchParams, account.id, keys)
  return answer instanceof TextAnswer ? answer : { account: account.name, ...answer }
}
