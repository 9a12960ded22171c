import { InternalError } from '../../src/errors/rpcErrors.ts'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../../src/errors/upstreamErrors.ts'

/** What a fuzzed body must never get, and where it came from (a body index, a transport). */
export type FuzzFinding = {
  type: 'status' | 'internal' | 'not json' | 'no answer' | 'closed' | 'missing answers'
  origin: string
  detail: string
}

/** The gateway's own -32603 messages: a 5xx of ours, even inside a 200 batch or over WebSocket. */
const gatewayInternalMessages = new Set(
  [new InternalError(), new UpstreamUnavailableError(), new UpstreamTimeoutError()].map(
    (error) => error.message,
  ),
)

export type CheckedAnswer = {
  /** The JSON-RPC error codes in the answer, one per element. */
  codes: number[]
  /** Elements that carry a result. */
  results: number
  /** -32603 messages that are the node's own, passed through unchanged (not the gateway's). */
  nodeInternal: string[]
  problems: Pick<FuzzFinding, 'type' | 'detail'>[]
}

/** Reads one answer (a response object or a batch of them) the way a client would. */
export function checkFuzzAnswer(text: string): CheckedAnswer {
  const checked: CheckedAnswer = { codes: [], results: 0, nodeInternal: [], problems: [] }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    checked.problems.push({ type: 'not json', detail: text.slice(0, 300) })
    return checked
  }
  for (const item of Array.isArray(value) ? value : [value]) {
    const response = item as { result?: unknown; error?: { code?: unknown; message?: unknown } } | null
    if (response && 'result' in response) checked.results++
    const error = response?.error
    if (!error || typeof error.code !== 'number') continue
    checked.codes.push(error.code)
    if (error.code !== -32603) continue
    const message = String(error.message)
    if (gatewayInternalMessages.has(message)) {
      checked.problems.push({ type: 'internal', detail: JSON.stringify(item).slice(0, 300) })
    } else checked.nodeInternal.push(message)
  }
  return checked
}
