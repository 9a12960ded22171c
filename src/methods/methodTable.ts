import { blockOverrides } from './blockOverrides.ts'
import { callObject } from './callObject.ts'
import { logFilter } from './logFilter.ts'
import { type Contracts, methodContracts } from './methodContracts.ts'
import { paramLimits } from './paramLimits.ts'
import {
  address,
  any,
  arrayOf,
  blockCount,
  blockRef,
  blockTag,
  boolean,
  bytes,
  hash,
  hexId,
  type ParamParser,
  type ParamSpec,
  quantity,
  receiptsBlockRef,
  rewardPercentiles,
  storageKey,
  storageSlot,
} from './params.ts'
import { receiptTimeout } from './receiptTimeout.ts'
import { simulatePayload } from './simulatePayload.ts'
import { stateOverrides } from './stateOverrides.ts'
import { traceFilter } from './traceFilter.ts'
import { traceCallOptions, traceOptions } from './traceOptions.ts'
import { traceTypes } from './traceTypes.ts'

/**
 * How long an answer stays true: `immutable` when the call names a block by hash (or a finalized
 * number), `head` until the next block, `never` for anything with side effects or node-local state.
 */
export type CacheClass = 'immutable' | 'head' | 'never'

/** How a call uses a filter id: answers a new one, or names one (an unknown id: `filter not found`, or `false` to remove). */
export type FilterRole = 'makes' | 'reads' | 'removes'

export type MethodSpec = {
  name: string
  /** false: answered with -32601 before any node is asked. */
  offered: boolean
  params: readonly ParamSpec[]
  costCredits: number
  cacheClass: CacheClass
  /**
   * A `head` answer pinned to a block hash or a finalized number never changes, so it is kept as
   * immutable; one pinned to another number, as long as that block stays on the chain.
   */
  pinnedIsImmutable: boolean
  /**
   * A transaction or its receipt by hash: once mined, its answer names the block it is in and is
   * kept as long as that block stays on the chain; before, until the next block.
   */
  pinnedByAnswer: boolean
  /** May go to a partner provider when every upstream failed (docs/compatibility.md §7); config may replace the list. */
  failoverEligible: boolean
  /** Safe to send twice: retried on another upstream after a transient failure. */
  idempotent: boolean
  /** Answers a block number that must never go backwards for a client (eth_blockNumber). */
  monotonicHead: boolean
  /**
   * Works on state one node keeps (filters): sent to the first healthy upstream in config order,
   * never to whichever is at the head at the moment, so that a filter's calls reach the node that made it.
   */
  nodeState: boolean
  /** Makes, reads or removes a node's filter: its ids are sealed to the key that made it (docs/compatibility.md §4). */
  filterRole: FilterRole | undefined
  /** "Not found" is a null result, whatever the node answered (docs/compatibility.md §7). */
  nullWhenNotFound: boolean
  /** `gas` above 10x the latest block gas limit is lowered to that cap (docs/compatibility.md §7). */
  capsGas: boolean
  /**
   * Which contracts a call touches, for the contracts allowlist (docs/compatibility.md §4): kept in
   * methodContracts.ts, one entry per method; `unchecked` (refused for such keys) where none is.
   */
  contracts: Contracts
  /** Answered by the gateway itself, never forwarded. */
  localResult: (() => unknown) | undefined
  /** Offered over WebSocket only: over HTTP the call answers -32601 `notifications not supported`. */
  subscriptionOnly: boolean
  /**
   * eth_getLogs and trace_filter: a `fromBlock`..`toBlock` range held to the network's
   * `maxLogsBlockRange` (docs/compatibility.md §7).
   */
  boundsBlockRange: boolean
  /**
   * eth_getLogs: its answer's logs held to the network's `maxLogsResults` (docs/compatibility.md §7),
   * counted in the answer; a trace answer holds no logs to count.
   */
  countsLogs: boolean
  /**
   * eth_sendRawTransaction: resent after a failure a node may have seen (never blindly: a resend's
   * `already known` answers the transaction's hash, docs/compatibility.md §7).
   */
  sendsTransaction: boolean
  /** eth_sendRawTransactionSync (EIP-7966): the node may wait up to the call's timeout for the receipt. */
  waitsForReceipt: boolean
  /**
   * What a call pinned to a block (pinnedBlock) needs of an upstream, so that it goes only to those
   * that have it: `state` (the state at that block: eth_call, eth_getBalance, ...), `block` (the
   * block, its transactions or receipts), undefined (not routed by block).
   */
  pinnedNeeds: 'state' | 'block' | undefined
  /**
   * A `null` result says that the node does not have the block (blocks and receipts by number or
   * hash): another upstream is asked, and null is the answer only when every one says so.
   */
  nullWhenNoBlock: boolean
}

/** The default row: what every method that the table does not name gets. */
const defaultMethodSpec: MethodSpec = {
  name: '',
  offered: false,
  params: [],
  costCredits: 80,
  cacheClass: 'never',
  pinnedIsImmutable: true,
  pinnedByAnswer: false,
  failoverEligible: false,
  idempotent: true,
  monotonicHead: false,
  nodeState: false,
  filterRole: undefined,
  nullWhenNotFound: false,
  capsGas: false,
  contracts: 'unchecked',
  localResult: undefined,
  subscriptionOnly: false,
  boundsBlockRange: false,
  countsLogs: false,
  sendsTransaction: false,
  waitsForReceipt: false,
  pinnedNeeds: undefined,
  nullWhenNoBlock: false,
}

const required = (parse: ParamParser): ParamSpec => ({ parse })
const optional = (parse: ParamParser): ParamSpec => ({ parse, optional: true })
/** trace_get's trace address: a path in a call tree, no deeper than the EVM's 1024 calls. */
const traceAddress = arrayOf(quantity, 'trace address indices', paramLimits.traceAddressIndices)
/** eth_getProof's storage keys: geth's maxGetProofKeys. */
const proofKeys = arrayOf(storageKey, 'storage keys', paramLimits.proofKeys)
/** A block argument geth lets callers leave out: it means `latest`, and is sent on as such. */
const latestIfOmitted: ParamSpec = { parse: blockRef, optional: true, defaultValue: 'latest' }

type Row = Partial<Omit<MethodSpec, 'name' | 'params' | 'contracts' | 'filterRole'>>
/** Calls on the state at a block; on a block; on a whole block, whose null says the node lacks it. */
const onState: Row = { pinnedNeeds: 'state' }
const onBlock: Row = { pinnedNeeds: 'block' }
const onWholeBlock: Row = { pinnedNeeds: 'block', nullWhenNoBlock: true }

const rows: Record<string, [readonly ParamSpec[], Row?]> = {
  // docs/compatibility.md §2
  eth_getStorageAt: [
    [required(address), required(storageSlot), required(blockRef)],
    { ...onState, failoverEligible: true, cacheClass: 'head' },
  ],
  eth_getBlockByHash: [
    [required(hash), required(boolean)],
    { ...onWholeBlock, nullWhenNotFound: true, cacheClass: 'immutable' },
  ],
  eth_getBlockByNumber: [
    [required(blockTag), required(boolean)],
    { ...onWholeBlock, nullWhenNotFound: true, cacheClass: 'head' },
  ],
  eth_getUncleByBlockHashAndIndex: [
    [required(hash), required(quantity)],
    { ...onBlock, costCredits: 150, nullWhenNotFound: true, cacheClass: 'immutable' },
  ],
  eth_getTransactionByBlockNumberAndIndex: [
    [required(blockTag), required(quantity)],
    { ...onBlock, costCredits: 150, nullWhenNotFound: true, failoverEligible: true, cacheClass: 'head' },
  ],
  eth_getTransactionByBlockHashAndIndex: [
    [required(hash), required(quantity)],
    { ...onBlock, costCredits: 150, nullWhenNotFound: true, failoverEligible: true, cacheClass: 'immutable' },
  ],
  eth_getTransactionReceipt: [
    [required(hash)],
    { nullWhenNotFound: true, failoverEligible: true, cacheClass: 'head', pinnedByAnswer: true },
  ],
  eth_getBlockReceipts: [
    [required(receiptsBlockRef)],
    { ...onWholeBlock, costCredits: 1000, nullWhenNotFound: true, cacheClass: 'head' },
  ],
  eth_call: [
    [required(callObject), latestIfOmitted, optional(stateOverrides), optional(blockOverrides)],
    { ...onState, capsGas: true, cacheClass: 'head' },
  ],
  eth_createAccessList: [[required(callObject), latestIfOmitted], { ...onState, cacheClass: 'head' }],
  eth_getProof: [
    [required(address), required(proofKeys), required(blockRef)],
    { ...onState, costCredits: 150, cacheClass: 'head' },
  ],

  // The other standard reads (docs/compatibility.md §2 costs)
  eth_chainId: [[], { costCredits: 5, cacheClass: 'immutable' }],
  net_version: [[], { costCredits: 5, cacheClass: 'immutable' }],
  net_listening: [[], { costCredits: 5 }],
  net_peerCount: [[], {}],
  eth_syncing: [[], { costCredits: 5 }],
  eth_protocolVersion: [[], { costCredits: 5 }],
  eth_mining: [[], { costCredits: 5 }],
  eth_hashrate: [[], { costCredits: 5 }],
  web3_clientVersion: [[], {}],
  web3_sha3: [[required(bytes)], { cacheClass: 'immutable' }],
  eth_accounts: [[], { localResult: () => [] }],
  eth_blockNumber: [[], { cacheClass: 'head', monotonicHead: true }],
  eth_gasPrice: [[], { cacheClass: 'head' }],
  eth_maxPriorityFeePerGas: [[], { cacheClass: 'head' }],
  eth_blobBaseFee: [[], { costCredits: 300, cacheClass: 'head' }],
  eth_feeHistory: [
    [required(blockCount), required(blockTag), optional(rewardPercentiles)],
    // anvil fills the last baseFeePerGas (the next block's) from the current head, even for old blocks
    { ...onBlock, cacheClass: 'head', pinnedIsImmutable: false },
  ],
  eth_getBalance: [[required(address), required(blockRef)], { ...onState, cacheClass: 'head' }],
  eth_getCode: [[required(address), required(blockRef)], { ...onState, cacheClass: 'head' }],
  eth_getTransactionCount: [[required(address), required(blockRef)], { ...onState, cacheClass: 'head' }],
  eth_getTransactionByHash: [
    [required(hash)],
    { nullWhenNotFound: true, cacheClass: 'head', pinnedByAnswer: true },
  ],
  eth_getBlockTransactionCountByHash: [
    [required(hash)],
    { ...onWholeBlock, costCredits: 150, cacheClass: 'immutable' },
  ],
  eth_getBlockTransactionCountByNumber: [
    [required(blockTag)],
    { ...onWholeBlock, costCredits: 150, cacheClass: 'head' },
  ],
  eth_getUncleByBlockNumberAndIndex: [
    [required(blockTag), required(quantity)],
    { ...onBlock, costCredits: 150, nullWhenNotFound: true, cacheClass: 'head' },
  ],
  eth_getUncleCountByBlockHash: [
    [required(hash)],
    { ...onWholeBlock, costCredits: 150, cacheClass: 'immutable' },
  ],
  eth_getUncleCountByBlockNumber: [
    [required(blockTag)],
    { ...onWholeBlock, costCredits: 150, cacheClass: 'head' },
  ],
  eth_estimateGas: [
    [required(callObject), latestIfOmitted, optional(stateOverrides), optional(blockOverrides)],
    { ...onState, costCredits: 300, capsGas: true },
  ],
  eth_getLogs: [
    [required(logFilter)],
    { ...onBlock, costCredits: 255, cacheClass: 'head', boundsBlockRange: true, countsLogs: true },
  ],
  // not idempotent: filters are state on one node; a transaction is resent only where a node may
  // have lost it, and a resend's "already known" is its hash
  eth_sendRawTransaction: [[required(bytes)], { idempotent: false, sendsTransaction: true }],
  // EIP-7966: a send and its wait, priced as eth_sendRawTransaction plus eth_getTransactionReceipt
  eth_sendRawTransactionSync: [
    [required(bytes), optional(receiptTimeout)],
    { costCredits: 160, idempotent: false, sendsTransaction: true, waitsForReceipt: true },
  ],
  eth_newFilter: [[required(logFilter)], { idempotent: false, nodeState: true }],
  eth_newBlockFilter: [[], { idempotent: false, nodeState: true }],
  eth_newPendingTransactionFilter: [[], { idempotent: false, nodeState: true }],
  eth_uninstallFilter: [[required(hexId)], { idempotent: false, nodeState: true }],
  eth_getFilterChanges: [[required(hexId)], { costCredits: 140, idempotent: false, nodeState: true }],
  eth_getFilterLogs: [[required(hexId)], { costCredits: 255, nodeState: true }],
  eth_simulateV1: [[required(simulatePayload), latestIfOmitted], { ...onState, costCredits: 300 }],

  // WebSocket only
  eth_subscribe: [[required(any), optional(any)], { costCredits: 5, subscriptionOnly: true }],
  eth_unsubscribe: [[required(hexId)], { costCredits: 10, subscriptionOnly: true }],

  // Tracing: read-only replays, at the docs/compatibility.md §2 prices
  debug_traceTransaction: [[required(hash), optional(traceOptions)], { costCredits: 1000 }],
  debug_traceCall: [
    [required(callObject), required(blockRef), optional(traceCallOptions)],
    { ...onState, costCredits: 1000 },
  ],
  debug_traceBlockByNumber: [[required(blockTag), optional(traceOptions)], { ...onState, costCredits: 1000 }],
  debug_traceBlockByHash: [[required(hash), optional(traceOptions)], { ...onState, costCredits: 1000 }],
  trace_block: [[required(blockTag)], { ...onState, costCredits: 300 }],
  trace_transaction: [[required(hash)], { costCredits: 300 }],
  trace_get: [[required(hash), required(traceAddress)], { costCredits: 300 }],
  trace_call: [
    [required(callObject), required(traceTypes), optional(blockRef)],
    { ...onState, costCredits: 300 },
  ],
  // held to the network's block-range limit as eth_getLogs is
  trace_filter: [[required(traceFilter)], { costCredits: 300, boundsBlockRange: true }],
  trace_replayTransaction: [[required(hash), required(traceTypes)], { costCredits: 300 }],
  trace_replayBlockTransactions: [
    [required(blockTag), required(traceTypes)],
    { ...onState, costCredits: 300 },
  ],
}

/** The filter column: the methods on a node's filters, whose ids tollgate seals to their key. */
const filterRoles: Readonly<Record<string, FilterRole>> = {
  eth_newFilter: 'makes',
  eth_newBlockFilter: 'makes',
  eth_newPendingTransactionFilter: 'makes',
  eth_getFilterChanges: 'reads',
  eth_getFilterLogs: 'reads',
  eth_uninstallFilter: 'removes',
}

const table = new Map<string, MethodSpec>(
  Object.entries(rows).map(([name, [params, row]]) => [name, methodSpec(name, true, params, row)]),
)

/** The row for a method, or the default row (not offered, 80 credits) for any other name. */
export function getMethodSpec(method: string): MethodSpec {
  return table.get(method) ?? methodSpec(method, false, defaultMethodSpec.params, undefined)
}

/**
 * A spec with every field written in one literal, in one order: every spec has one shape, so the
 * request path's code, which reads them on every call, sees one kind of object whatever the method
 * (spread rows gave calls of different methods objects of different shapes).
 */
function methodSpec(
  name: string,
  offered: boolean,
  params: readonly ParamSpec[],
  row: Row | undefined,
): MethodSpec {
  const spec = row === undefined ? defaultMethodSpec : { ...defaultMethodSpec, ...row }
  return {
    name,
    offered,
    params: params.map(paramSpec),
    costCredits: spec.costCredits,
    cacheClass: spec.cacheClass,
    pinnedIsImmutable: spec.pinnedIsImmutable,
    pinnedByAnswer: spec.pinnedByAnswer,
    failoverEligible: spec.failoverEligible,
    idempotent: spec.idempotent,
    monotonicHead: spec.monotonicHead,
    nodeState: spec.nodeState,
    filterRole: offered ? filterRoles[name] : undefined,
    nullWhenNotFound: spec.nullWhenNotFound,
    capsGas: spec.capsGas,
    contracts: (offered ? methodContracts[name] : undefined) ?? defaultMethodSpec.contracts,
    localResult: spec.localResult,
    subscriptionOnly: spec.subscriptionOnly,
    boundsBlockRange: spec.boundsBlockRange,
    countsLogs: spec.countsLogs,
    sendsTransaction: spec.sendsTransaction,
    waitsForReceipt: spec.waitsForReceipt,
    pinnedNeeds: spec.pinnedNeeds,
    nullWhenNoBlock: spec.nullWhenNoBlock,
  }
}

/** A param's spec with all its fields, for the same reason: parseParams reads them for every param. */
function paramSpec({ parse, optional = false, defaultValue }: ParamSpec): ParamSpec {
  return { parse, optional, defaultValue }
}

/** The methods the table marks eligible for partner failover (the default of `failover.methods`). */
export function getFailoverMethods(): string[] {
  return [...table.values()].filter((spec) => spec.failoverEligible).map((spec) => spec.name)
}

/** Every method the gateway offers, for docs, metrics labels and tests. */
export function getOfferedMethods(): string[] {
  return [...table.keys()]
}
