import type { CacheScope } from '../cache/cacheScope.ts'
import { type PinnedBlock, pinnedBlock } from '../cache/pinnedBlock.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import { receiptWaitMs } from '../methods/receiptTimeout.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { RawTransaction } from '../upstreams/SendOptions.ts'
import type { BoundedLogs, LogsAnswerCheck } from './boundLogs.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { RpcContext } from './rpcContext.ts'
import type { LogsQuery } from './splitLogsRange.ts'

/** Where and how a call is sent, decided once per call. */
export type Route = {
  /** The partners this call may fail over to, if any. */
  partners: Network['partners']
  headSensitive: boolean
  /**
   * The blocks the call is pinned to (pinnedBlock): `fromBlock`..`block` (one block: the same
   * number twice), and whether it needs their state.
   */
  block: bigint | undefined
  fromBlock: bigint | undefined
  needsState: boolean
  /** A null block from one upstream is not the answer while another may have it. */
  nullIsMissing: boolean
  retry: boolean
  /** A send's transaction, and how long its node may wait for the receipt (SendOptions.rawTransaction). */
  rawTransaction: RawTransaction | undefined
  /** Whose the gas of an eth_call or eth_estimateGas is (SendOptions.capsGas). */
  capsGas: 'ours' | 'client' | undefined
  checkLogs: LogsAnswerCheck | undefined
  /** An eth_getLogs query over known blocks, split when every upstream refuses its range. */
  logs: LogsQuery | undefined
  /**
   * With `logs`: how many upstreams answered its whole range with an error (SendOptions.answeredBy,
   * written by the pool), for the width a split learns when every one of them refused it.
   */
  logsAnsweredBy: { members: number } | undefined
}

/**
 * Where a call with `params` (its prepared params, or as made ready to send) may be sent: answers
 * that cannot change from any upstream, the others only from upstreams at the head, except calls on
 * one node's state (filters), which keep to config order; a call pinned to a block only to upstreams
 * that have it (docs/compatibility.md §7), and a null block from one of them moves it on while the
 * block is at or below the network's head. A call may go on to the partners by its own right
 * (docs/compatibility.md §7: plan, header or key switch, method); an eth_getLogs range `bounded` is
 * checked, and split over known blocks.
 */
export function routeOf(
  ctx: RpcContext,
  prepared: PreparedCall & { ok: true },
  params: unknown[],
  scope: CacheScope,
  bounded: BoundedLogs | undefined,
): Route {
  const { network } = ctx
  const { spec } = prepared
  const pinned = spec.pinnedNeeds && pinnedBlock(spec, params, network.head.finalized())
  const block = typeof pinned === 'bigint' ? pinned : undefined
  const range = typeof pinned === 'object' ? pinned : undefined
  const counted = spec.countsLogs ? bounded : undefined
  const blocks = counted?.blocks
  return {
    partners: ctx.failover && network.failoverMethods.has(spec.name) ? network.partners : undefined,
    headSensitive: scope !== 'immutable' && !spec.nodeState,
    block: range ? range.to : block,
    fromBlock: range ? range.from : block,
    needsState: spec.pinnedNeeds === 'state',
    nullIsMissing: spec.nullWhenNoBlock && isBelowHead(network, pinned),
    retry: spec.idempotent,
    rawTransaction: spec.sendsTransaction ? rawTransactionOf(spec, params) : undefined,
    capsGas: gasOf(prepared, params),
    checkLogs: counted?.check,
    // eth_getLogs over known blocks: split if every upstream refuses its range (splitLogsRange.ts)
    logs: blocks && { filter: params[0] as Record<string, unknown>, first: blocks[0], last: blocks[1] },
    logsAnsweredBy: blocks && { members: 0 },
  }
}

/**
 * Whose the `gas` of a call that caps gas is: the client's own figure as sent, or ours (none, the
 * node's default then, or the gas cap's). Undefined for the other methods.
 */
function gasOf(prepared: PreparedCall & { ok: true }, params: unknown[]): Route['capsGas'] {
  if (!prepared.spec.capsGas) return undefined
  if (params !== prepared.params) return 'ours'
  return typeof (params[0] as { gas?: unknown } | undefined)?.gas === 'string' ? 'client' : 'ours'
}

/** A send's transaction; with the node's wait for its receipt (eth_sendRawTransactionSync's timeout). */
function rawTransactionOf(spec: MethodSpec, params: unknown[]): RawTransaction {
  const receiptWait = spec.waitsForReceipt ? receiptWaitMs(params[1]) : undefined
  return { bytes: params[0] as string, receiptWaitMs: receiptWait }
}

/**
 * A block by hash, or by a number an upstream in use has reached or a client was shown (an upstream
 * told it, or another instance did): an upstream's null is not the last word.
 */
function isBelowHead(network: Network, pinned: PinnedBlock): boolean {
  if (pinned === 'hash') return true
  if (typeof pinned !== 'bigint') return false
  const { head } = network
  const reached = head.reached()
  return pinned <= head.shown || (reached !== undefined && pinned <= reached)
}
