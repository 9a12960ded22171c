import type { Buffer } from 'node:buffer'

/** The longest answer read for a null result: `{"jsonrpc":"2.0","id":…,"result":null}` with a long id. */
const maxNullAnswerBytes = 1024

/** Whether an answer's result is `null` (cheap for everything else: length, then a search, then a parse). */
export function isNullResult(answer: Buffer): boolean {
  if (answer.length > maxNullAnswerBytes || answer.indexOf('null') === -1) return false
  try {
    const parsed = JSON.parse(answer.toString()) as { result?: unknown; error?: unknown }
    return (
      parsed !== null && typeof parsed === 'object' && parsed.result === null && parsed.error === undefined
    )
  } catch {
    return false
  }
}
