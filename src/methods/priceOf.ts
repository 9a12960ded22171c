import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import type { MethodSpec } from './methodTable.ts'

/**
 * Every price that is not one method's own (docs/compatibility.md §2); each method's own is its row's
 * `costCredits` in the method table beside this file.
 */
const credits = {
  /** Input refused before any work: parse errors, bad params, unknown methods, 403s, 413, 415. */
  refusedInput: 5,
  /** A batch, beyond its calls. */
  batchEnvelope: 80,
  /** Each Gas REST API call. */
  gasEndpoint: 80,
  /** Each delivered WebSocket notification: per block for newHeads and logs (a block with a match). */
  notification: { newHeads: 50, logs: 300, newPendingTransactions: 200 },
} as const

/** What a subscription notifies of (eth_subscribe's first param). */
export type NotificationKind = keyof typeof credits.notification

/** Something a key is charged for (or not): the one question priceOf answers. */
export type PricedOutcome =
  /** A call answered (a node's error answer, a revert among them, included): the method's price. */
  | { kind: 'served'; spec: MethodSpec }
  /** A call refused before it ran (unknown method, bad params, an allowlist): refused input. */
  | { kind: 'refusedCall' }
  /**
   * A request refused whole before its calls ran (403, 413, 415, parse errors, a Gas API request's
   * bad input): refused input; free when the refusal is ours (`httpStatus` 5xx: a busy server) or
   * the balance's own (402, 429).
   */
  | { kind: 'rejectedRequest'; httpStatus: number }
  /**
   * A call that ran and failed without a node's answer: free when the failure is ours or upstream
   * (`httpStatus` 5xx), a limit's (429: its key's calls in flight) or the client went away; params
   * refused before any node was asked (an eth_getLogs range over the limit) as refused input; else
   * the method's price. A timeout a node worked through, answering others meanwhile, is the call's
   * own (slow by its nature): the method's price, though a 504.
   */
  | { kind: 'failed'; spec: MethodSpec; error: unknown; httpStatus: number; clientGone: boolean }
  /**
   * A batch, beyond its calls: paid by a batch some of whose calls ran and cost credits; a batch
   * refused whole (too large, or nothing but refused calls) costs what its refused calls cost.
   */
  | { kind: 'batchEnvelope'; callsRan: boolean; callsCharged: boolean }
  /** One delivered WebSocket notification. */
  | { kind: 'notification'; subscription: NotificationKind }
  /** One Gas REST API answer. */
  | { kind: 'gasApi' }

/** What `outcome` costs, in credits: the one place that decides it. */
export function priceOf(outcome: PricedOutcome): number {
  switch (outcome.kind) {
    case 'served':
      return outcome.spec.costCredits
    case 'refusedCall':
      return credits.refusedInput
    case 'rejectedRequest':
      return isFree(outcome.httpStatus) ? 0 : credits.refusedInput
    case 'failed':
      if (outcome.clientGone) return 0
      if (outcome.error instanceof UpstreamTimeoutError && outcome.error.nodeWorked)
        return outcome.spec.costCredits
      if (outcome.httpStatus >= 500 || outcome.httpStatus === 429) return 0
      return outcome.error instanceof InvalidParamsError ? credits.refusedInput : outcome.spec.costCredits
    case 'batchEnvelope':
      return outcome.callsRan && outcome.callsCharged ? credits.batchEnvelope : 0
    case 'notification':
      return credits.notification[outcome.subscription]
    case 'gasApi':
      return credits.gasEndpoint
  }
}

/** A refusal that is ours (5xx) or the balance's own (402, 429): nothing was used to charge for. */
function isFree(httpStatus: number): boolean {
  return httpStatus >= 500 || httpStatus === 402 || httpStatus === 429
}
