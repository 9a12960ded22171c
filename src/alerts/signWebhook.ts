import { createHmac } from 'node:crypto'

/**
 * The `Tollgate-Signature` header of a delivery: `t=<unix seconds>,v1=<hex HMAC-SHA-256 of
 * "<t>.<body>" under the signing secret>` (docs/api.md shows how a receiver checks it). The time is
 * signed with the body, so a receiver can refuse an old delivery replayed.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const signed = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${signed}`
}
