import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import type { KeyRequest } from './authorizeKeyRequest.ts'
import type { CallOutcome } from './callOutcome.ts'
import type { PreparedCall } from './prepareCall.ts'

// What the request path tells the request log (src/requestLog/ implements it; handleRpc calls it).

/** A request of a known key, as the pipeline knows it when it is answered. */
export type LoggedRequest = {
  key: KeyEntry
  network: string
  keyRequest: KeyRequest
  /** performance.now() when the request arrived. */
  startedMs: number
}

/** Where the request path tells the log how each call ended (handleRpc, once per request, HTTP and WebSocket alike). */
export type RequestLogTap = {
  /** A request refused whole (its body, its key's credits or rate): one row, always. */
  refused(request: LoggedRequest, method: string, err: unknown, credits: number): void
  /**
   * A request refused before it was let in (its credentials, allowlists, network): anyone who knows
   * a key's value can send these, so each key keeps at most a few (maxUnprovenRowsPerMinute) a minute, and
   * one row more says how many were left out.
   */
  refusedAtTheDoor(request: LoggedRequest, err: unknown): void
  /** Each call of a request that ran: errors and refusals always, the rest as sampled. */
  calls(request: LoggedRequest, calls: readonly PreparedCall[], outcomes: readonly CallOutcome[]): void
}

/** The label of a row for a request refused before its calls were read. */
export const wholeRequestLabel = '(request)'
