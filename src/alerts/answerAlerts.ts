import { AdminRequestError } from '../errors/adminErrors.ts'
import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import { alertSettingsBody } from './alertSettings.ts'
import { type AlertAdmin, maxDeliveryRows } from './createAlertAdmin.ts'

export type AlertsRequest = {
  method: string
  /** The path's parts below `.../alerts`: none (the settings) or `deliveries`. */
  rest: readonly string[]
  body: string
  query: URLSearchParams
}

/**
 * `.../alerts` (GET, PUT, DELETE: the settings) and `.../alerts/deliveries` (GET: the delivery log),
 * answered alike for the admin API (any account) and the account API (the signed-in one). A PUT
 * answers the settings, and `secret` once when one was made.
 */
export async function answerAlerts(alerts: AlertAdmin, account: string, request: AlertsRequest) {
  const { method, rest } = request
  if (rest.length === 0) {
    if (method === 'GET') return alerts.get(account)
    if (method === 'PUT') {
      const { settings, secret } = await alerts.set(account, parseBody(request.body))
      return { ...settings, secret }
    }
    if (method === 'DELETE') return { account, enabled: false, turnedOff: await alerts.turnOff(account) }
    // as the admin API answers a method a path does not have
    throw new RouteNotFoundError()
  }
  if (rest.length === 1 && rest[0] === 'deliveries') {
    if (method !== 'GET') throw new HttpMethodNotAllowedError('GET')
    const limit = parseWholeNumber('limit', request.query.get('limit'), {
      min: 1,
      max: maxDeliveryRows,
      fallback: 100,
    })
    return { account, deliveries: await alerts.deliveries(account, limit) }
  }
  throw new RouteNotFoundError()
}

function parseBody(text: string) {
  let json: unknown
  try {
    json = text.trim() === '' ? {} : JSON.parse(text)
  } catch {
    throw new AdminRequestError('the body is not JSON')
  }
  const parsed = alertSettingsBody.safeParse(json)
  if (parsed.success) return parsed.data
  throw new AdminRequestError(
    parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; '),
  )
}
