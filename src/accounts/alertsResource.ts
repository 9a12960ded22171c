import { answerAlerts } from '../alerts/answerAlerts.ts'
import type { AccountCall } from './accountApiTypes.ts'

/**
 * The account API's `alerts` resource: the signed-in account's usage alert settings (GET, PUT,
 * DELETE /account/api/alerts) and their delivery log (GET /account/api/alerts/deliveries).
 */
export function handleAccountAlerts(call: AccountCall): Promise<unknown> {
  const parts = call.url.pathname.replace(/\/+$/, '').split('/').slice(4)
  return answerAlerts(call.deps.alerts, call.account.name, {
    method: call.request.method,
    rest: parts,
    body: call.request.body,
    query: call.url.searchParams,
  })
}
