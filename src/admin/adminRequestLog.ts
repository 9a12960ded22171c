import type { AccountAdmin } from '../accounts/createAccountAdmin.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import { AdminRequestError } from '../errors/adminErrors.ts'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import {
  type RequestLogReader,
  readRequests,
  summarizeRequests,
  TextAnswer,
} from '../requestLog/readRequestLog.ts'
import type { AdminResponse } from './adminApiTypes.ts'

export type AdminRequestLogDeps = { admin: KeyAdmin; accounts: AccountAdmin; requestLog: RequestLogReader }

/**
 * GET /admin/requests (every account's request log, or `?account=NAME`'s, with the account API's
 * filters and NDJSON export) and GET /admin/requests/summary?account=NAME (the account API's summary).
 */
export async function answerAdminRequests(
  deps: AdminRequestLogDeps,
  parts: readonly string[],
  search: URLSearchParams,
): Promise<AdminResponse> {
  const name = search.get('account')
  const account = name === null ? undefined : await deps.accounts.show(name)
  if (parts.length === 2 && parts[1] === 'summary') {
    if (!account) throw new AdminRequestError('account: name the account to summarize')
    const summary = await summarizeRequests(deps.requestLog, search, account.account.id)
    return { status: 200, body: { account: account.account.name, ...summary } }
  }
  if (parts.length !== 1) throw new RouteNotFoundError()
  const keys = account ? account.keys : await deps.admin.list()
  const answer = await readRequests(deps.requestLog, search, account?.account.id, keys)
  if (answer instanceof TextAnswer)
    return { status: 200, body: answer.text, contentType: answer.contentType, headers: answer.headers }
  return { status: 200, body: { account: account?.account.name ?? null, ...answer } }
}
