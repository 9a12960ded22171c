import type { AlertFormat } from './alertSettings.ts'
import type { AlertEventKind } from './alertStore.ts'

/** The event a delivery carries (docs/api.md "Usage alerts"): kept with the event, the same on every attempt. */
export type AlertPayload = {
  /** The event's id, also in `Tollgate-Event-Id`. */
  id: string
  account: string
  /** The key's name for a key's own limit or its rate; null for the account's credits. */
  key: string | null
  event: AlertEventKind
  /** The percent of the limit reached; null for `rate_limited`. */
  threshold: number | null
  /** Credits spent on `day` (the key's, for a key's own limit), as the ledger had them when the event was made. */
  creditsUsed: number
  /** The daily credits those are counted against; null when there is no daily limit. */
  creditLimit: number | null
  day: string
  /** When the event was made (ISO 8601, UTC). */
  time: string
}

/** The body of an attempt in the account's format: the event's JSON, or Slack's `{"text": ...}`. */
export function toDeliveryBody(payload: string, format: AlertFormat): string {
  if (format === 'json') return payload
  return JSON.stringify({ text: toAlertText(JSON.parse(payload) as AlertPayload) })
}

/** One line a person reads in a chat channel. */
function toAlertText(event: AlertPayload): string {
  const who = event.key === null ? `Account ${event.account}` : `Key ${event.key} of account ${event.account}`
  if (event.event === 'rate_limited') {
    return `${who} was refused for its per-second rate limit (429) for the first time on ${event.day} (UTC). [tollgate event ${event.id}]`
  }
  const limit = event.creditLimit === null ? '' : ` of ${event.creditLimit}`
  return `${who} has used ${event.threshold}% of its daily credits on ${event.day} (UTC): ${event.creditsUsed}${limit} credits. [tollgate event ${event.id}]`
}
