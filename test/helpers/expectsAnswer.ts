import { isJsonDeeperThan } from '../../src/jsonrpc/isJsonDeeperThan.ts'

/**
 * Whether a body gets an answer (over WebSocket nothing else tells): it does unless it is a
 * notification (a well-formed call without `id`) or a batch of nothing else. Anything that is not
 * a request at all gets an error.
 */
export function expectsAnswer(body: string | Buffer, maxJsonDepth: number): boolean {
  const text = body.toString()
  if (isJsonDeeperThan(text, maxJsonDepth)) return true
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return true
  }
  if (!Array.isArray(value)) return !isNotification(value)
  return value.length === 0 || !value.every(isNotification)
}

function isNotification(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const call = value as Record<string, unknown>
  return (
    !('id' in call) &&
    call.jsonrpc === '2.0' &&
    typeof call.method === 'string' &&
    call.method !== '' &&
    (call.params === undefined || call.params === null || Array.isArray(call.params))
  )
}
