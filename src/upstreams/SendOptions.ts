import type { Cancellation } from '../failsafe/Cancellation.ts'
import type { AnswerBudget } from './AnswerBudget.ts'
import type { CallTrail } from './CallTrail.ts'

/** What a call through a pool asks of it (UpstreamPool.send). */
export type SendOptions = {
  /** performance.now() by which the answer must be in (default: timeoutMs from now); past it, a 504. */
  deadline?: number
  /**
   * Transient failures (timeout, connection error, 5xx, 429, garbage, and the node errors that mean
   * "cannot answer now": nodeErrors.ts) are retried, on another member first.
   */
  retry?: boolean
  /** The answer depends on the head: members lagging the network's head are not used. */
  headSensitive?: boolean
  /**
   * The block the call is pinned to (pinnedBlock), the last of its range: members known not to have
   * it (their head below it) are asked only when no member is known to.
   */
  block?: bigint | undefined
  /**
   * The first block of the range (eth_getLogs, eth_feeHistory; default `block`): members whose
   * earliest block or state is above it are asked only when no member is known to have it all.
   */
  fromBlock?: bigint | undefined
  /** What the call needs of its blocks: their state (eth_call, eth_getBalance, ...), else the blocks themselves. */
  needsState?: boolean
  /**
   * A `null` result says that the member does not have the block (a block by number or hash):
   * another member is asked, and null is the answer only when every member asked said so.
   */
  nullIsMissing?: boolean
  /**
   * Partners follow if this pool fails: no attempt waits longer than attemptTimeoutMs, and when
   * every member answered a "cannot answer now" error, send rejects with NodeErrorAnswer instead of
   * resolving with the last one (the partners may have the data).
   */
  fallback?: boolean
  /**
   * The signed transaction of eth_sendRawTransaction or eth_sendRawTransactionSync: resent (on
   * another member when one is in use) after a failure a node may have seen (a signed transaction
   * cannot be applied twice), and a resend's `already known` answers its hash, or its receipt
   * (answerResentTransaction; docs/compatibility.md §7).
   */
  rawTransaction?: RawTransaction | undefined
  cancellation?: Cancellation | undefined
  /** What the client's request may hold of answers: a larger answer is refused (ResponseTooLargeError, ServerBusyError). */
  answerBudget?: AnswerBudget | undefined
  /**
   * eth_call and eth_estimateGas, whose `gas` is `ours` (none, or lowered by tollgate) or the
   * `client`'s. A node's refusal of it over its per-transaction cap (EIP-7825) is told to onGasCap,
   * and a call whose gas is ours is sent once more with `gas` at the cap; the client's own figure
   * refused is the client's answer.
   */
  capsGas?: 'ours' | 'client' | undefined
  /**
   * Written when the call ends with a node's error answer (every member asked answered one): how
   * many members answered it. Equal to the pool's members, every upstream said so.
   */
  answeredBy?: { members: number } | undefined
  /** Where the call's attempts are recorded (the route header, a trace); undefined: nowhere. */
  trail?: CallTrail | undefined
}

/** A transaction a call sends (SendOptions.rawTransaction). */
export type RawTransaction = {
  /** The signed transaction, 0x hex. */
  bytes: string
  /**
   * eth_sendRawTransactionSync: how long the node may wait for the receipt, in ms (each attempt is
   * given it beyond attemptTimeoutMs, and the caller's deadline beyond timeoutMs); undefined for
   * eth_sendRawTransaction, whose answer is the hash.
   */
  receiptWaitMs: number | undefined
}
