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

/** Why a call was refused before it ran: its input, or an id of a filter its key did not make. */
export type RefusalReason = 'input' | 'unknownFilter'

/** Something a key is charged for (or not): the one question priceOf answers. */
export type PricedOutcome =
  /**
   * A call answered (a node's error answer, a revert among them, included): the method's price; a
   * split eth_getLogs, the method's price for each node call it took (`splitCalls`: CallCharge).
   */
  | { kind: 'served'; spec: MethodSpec; splitCalls?: number }
  /**
   * A call refused before it ran: refused input (unknown method, bad params, an allowlist); nothing
   * for an id of a filter its key did not make (`unknownFilter`: answered as a node answers an unknown
   * filter, no node asked).
   */
  | { kind: 'refusedCall'; reason: RefusalReason }
  /**
   * A request refused whole before its calls ran (403, 413, 415, parse errors, a Gas API request's
   * bad input): refused input; free when the refusal is ours (`httpStatus` 5xx: a busy server) or
   * the balance's own (402, 429).
   */
  | { kind: 'rejectedRequest'; httpStatus: number }
  /**
   * A call that ran and failed without a node's answer: free when the failure is ours or upstream
   * (`httpStatus` 5xx), the balance's or a limit's (402, 429: a split's next chunk refused, its key's
   * calls in flight), or the client went away; params refused before any node was asked (an
   * eth_getLogs range over the limit) as refused input; else the method's price. A timeout a node
   * worked through, answering others meanwhile, is the call's own (slow by its nature): the method's
   * price, though a 504. A split eth_getLogs that took node calls (`splitCalls`: the refusal that
   * started it, each chunk a node answered or that was still on its way) costs the method's price
   * for each of them, however it ended.
   */
  | {
      kind: 'failed'
      spec: MethodSpec
      error: unknown
      httpStatus: number
      clientGone: boolean
      splitCalls?: number
    }
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
      return outcome.spec.costCredits * Math.max(1, outcome.splitCalls ?? 0)
    case 'refusedCall':
      return outcome.reason === 'input' ? credits.refusedInput : 0
    case 'rejectedRequest':
      return isFree(outcome.httpStatus) ? 0 : credits.refusedInput
    case 'failed':
      if (outcome.splitCalls) return outcome.spec.costCredits * outcome.splitCalls
      if (outcome.clientGone) return 0
      if (outcome.error instanceof UpstreamTimeoutError && outcome.error.nodeWorked)
        return outcome.spec.costCredits
      if (isFree(outcome.httpStatus)) return 0
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
