import type { FilterOwner } from '../auth/createFilterIds.ts'
import { type CacheScope, cacheScope } from '../cache/cacheScope.ts'
import { type FetchedAnswer, resultAnswer } from '../cache/createRpcCache.ts'
import { type PinnedBlock, pinnedBlock } from '../cache/pinnedBlock.ts'
import { FilterNotFoundError } from '../errors/rpcErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { asWrittenBody } from '../jsonrpc/parseRpcRequest.ts'
import { readHexResult } from '../jsonrpc/readHexResult.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcCall, RpcId, RpcPayload } from '../jsonrpc/types.ts'
import { withId } from '../jsonrpc/withId.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import type { Network } from '../networks/createNetwork.ts'
import { ClientGoneError, type SendOptions } from '../upstreams/createUpstreamPool.ts'
import { mayFailOver, NodeErrorAnswer } from '../upstreams/judgeAttempt.ts'
import { readNodeError } from '../upstreams/nodeErrors.ts'
import { boundLogs, type LogsAnswerCheck } from './boundLogs.ts'
import { capGas } from './capGas.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { RpcContext } from './rpcContext.ts'
import { type LogsQuery, rangeRefusalOf, splitLogsRange, splitsAtOnce } from './splitLogsRange.ts'

/** An answer a partner provider gave (docs/compatibility.md §7 failover). */
export class PartnerAnswer {
  constructor(readonly payload: RpcPayload) {}
}

/** A call's answer: its payload, or a partner's answer (which the client is told of). */
export type CallAnswer = RpcPayload | PartnerAnswer

/**
 * Runs one prepared call: the gas cap, the cache, the upstream pool and partner failover, the
 * docs/compatibility.md §7 duties on the answer. Upstream answers are returned as the bytes the node sent, parsed
 * only when a duty must look inside. Rejects with TollgateErrors; the caller turns them into wire errors.
 * A call with nothing to do but be sent (most calls without a cache) gets the pool's own promise: no
 * layer of its own between the request and the upstream; eth_blockNumber's and those whose "not found"
 * is null (receipts, blocks, transactions), one step after it.
 */
export function handleRpc(ctx: RpcContext, prepared: PreparedCall & { ok: true }): Promise<CallAnswer> {
  const { spec } = prepared
  let { params } = prepared
  const { network } = ctx
  if (hasDuties(spec) || (ctx.failover && network.failoverMethods.has(spec.name))) {
    return answerWithDuties(ctx, prepared)
  }
  if (spec.capsGas) {
    // capped here while the head is known (nearly always): no layer of its own for eth_call
    const head = network.heads.latest()
    if (!head) return answerWithDuties(ctx, prepared)
    params = capGas(params, head, network)
  }
  const scope = cacheScope(spec, params, network.heads.finalized())
  if (network.cache && scope !== 'never') return answerWithDuties(ctx, prepared)
  const route = routeOf(
    network,
    spec,
    params,
    scope,
    undefined,
    undefined,
    undefined,
    gasOf(spec, prepared, params),
  )
  const sent = network.pool.send(bodyOf(prepared, params), sendOptions(ctx, route, ctx.cancellation))
  // eth_blockNumber and the calls whose "not found" is null: one step after the answer, not the
  // whole of answerWithDuties
  const { id } = prepared.call
  if (spec.monotonicHead) {
    // read in the same turn as the send: no answer can come before
    const lowers = network.headLowers
    return sent.then((payload) => notBelowShownHead(network, id, payload, lowers))
  }
  if (!spec.nullWhenNotFound) return sent
  return sent.then((payload) => (saysNotFound(payload) ? local(id, null) : payload))
}

/**
 * Whether a method's calls need more than sending: answered here, or bounded (a new duty flag in the
 * method table belongs here too, or its calls skip answerWithDuties). The gas cap, while the head is
 * known, and the steps after the answer (the monotonic head, "not found" as null), when nothing else
 * applies, are handleRpc's own.
 */
function hasDuties(spec: MethodSpec): boolean {
  return (
    spec.localResult !== undefined ||
    spec.subscriptionOnly ||
    spec.boundsBlockRange ||
    spec.filterRole !== undefined
  )
}

/** Every other call: answered here, or capped, bounded, cached, failed over or read after sending. */
async function answerWithDuties(ctx: RpcContext, prepared: PreparedCall & { ok: true }): Promise<CallAnswer> {
  const { call, spec } = prepared
  let { params } = prepared
  if (spec.localResult) return local(call.id, spec.localResult())
  if (spec.subscriptionOnly && ctx.subscriptions) {
    const result =
      spec.name === 'eth_subscribe'
        ? ctx.subscriptions.subscribe(params)
        : ctx.subscriptions.unsubscribe(params[0])
    return local(call.id, result)
  }
  const { network, filterIds } = ctx
  const { filterRole } = spec
  // an answer asked for before a lower of the shown head is not shown (see notBelowShownHead)
  const lowers = spec.monotonicHead ? network.headLowers : 0
  if (filterRole === 'reads' || filterRole === 'removes') {
    // a filter this key did not make is unknown to it: answered as the node answers one, not forwarded
    const nodeId = typeof params[0] === 'string' ? filterIds.open(params[0], filterOwner(ctx)) : undefined
    if (nodeId === undefined) {
      if (filterRole === 'removes') return local(call.id, false)
      throw new FilterNotFoundError()
    }
    params = [nodeId]
  }
  if (spec.capsGas) {
    if (!network.heads.latest()) await network.heads.poll()
    const head = network.heads.latest()
    if (head) params = capGas(params, head, network)
  }

  const bounded = spec.boundsBlockRange ? await boundLogs(network, params[0]) : undefined
  const checkLogs = spec.countsLogs ? bounded?.check : undefined
  // eth_getLogs over known blocks: split if every upstream refuses its range (splitLogsRange.ts)
  const blocks = spec.countsLogs ? bounded?.blocks : undefined
  const logs = blocks && { filter: params[0] as Record<string, unknown>, first: blocks[0], last: blocks[1] }
  const { cache } = network
  const scope = cacheScope(spec, params, network.heads.finalized())
  // this call's own right to fail over (docs/compatibility.md §7): plan, header or key switch, method
  const partners = ctx.failover && network.failoverMethods.has(spec.name) ? network.partners : undefined
  const route = routeOf(
    network,
    spec,
    params,
    scope,
    partners,
    checkLogs,
    logs,
    gasOf(spec, prepared, params),
  )
  let answer: CallAnswer
  if (!cache || scope === 'never') {
    const body = bodyOf(prepared, params)
    if (!partners && !checkLogs) {
      // nothing to do before sending: the pool's answer as it is
      answer = await network.pool.send(body, sendOptions(ctx, route, ctx.cancellation))
    } else {
      answer = toCallAnswer(await forward(ctx, spec, body, call.id, route, ctx.cancellation))
    }
  } else {
    // the params are serialised once: for the cache key and the upstream body alike
    const paramsJson = JSON.stringify(params)
    const key = `${spec.name}${paramsJson}`
    const hit = cache.get(key, scope, call.id)
    if (hit !== undefined) {
      holdKept(ctx, hit)
      if (!spec.monotonicHead) return hit
      // a kept eth_blockNumber may be lower than a head shown since (from another upstream)
      const shown = notBelowShownHead(network, call.id, hit, lowers)
      return shown instanceof Promise ? await shown : shown
    }
    // one upstream call for every identical call in flight: it must not end when one client leaves.
    // Calls that may fail over share loads only with each other: a key that may not must never get
    // a partner's answer, and one that may must not be held to a load that will not ask the partners
    const body = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(call.method)},"params":${paramsJson}}`
    const loaded = await cache.load(
      key,
      scope,
      () => load(ctx, spec, body, route),
      partners ? 'failover' : undefined,
    )
    const payload = 'result' in loaded ? resultAnswer(call.id, loaded.result) : withId(loaded.answer, call.id)
    holdKept(ctx, payload)
    answer = loaded.partner === true ? new PartnerAnswer(payload) : payload
  }

  const partner = answer instanceof PartnerAnswer
  const payload = answer instanceof PartnerAnswer ? answer.payload : answer
  if (filterRole === 'makes') return sealedFilter(ctx, call.id, payload, partner)
  if (spec.nullWhenNotFound && saysNotFound(payload)) return local(call.id, null, partner)
  if (spec.monotonicHead) {
    // a promise only while a new number waits to be shown everywhere: no await otherwise
    const shown = notBelowShownHead(network, call.id, payload, lowers)
    const number = shown instanceof Promise ? await shown : shown
    return partner ? new PartnerAnswer(number) : number
  }
  return answer
}

/**
 * The body sent for a call with `params` (its prepared params, or the gas cap's): the client's own
 * text when nothing in it changed (the id kept as written); else written anew.
 */
function bodyOf(prepared: PreparedCall & { ok: true }, params: unknown[]): string | Buffer {
  const { call } = prepared
  const unchanged = params === prepared.params && prepared.paramsAsSent
  return (unchanged ? asWrittenBody(call) : undefined) ?? writtenBody(call, params)
}

function writtenBody(call: RpcCall, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: '2.0', id: call.id, method: call.method, params })
}

/**
 * Where a call may be sent: answers that cannot change from any upstream, the others only from
 * upstreams at the head, except calls on one node's state (filters), which keep to config order;
 * a call pinned to a block only to upstreams that have it (docs/compatibility.md §7), and a null
 * block from one of them moves it on while the block is at or below the network's head.
 */
function routeOf(
  network: Network,
  spec: MethodSpec,
  params: unknown[],
  scope: CacheScope,
  partners: Network['partners'],
  checkLogs: LogsAnswerCheck | undefined,
  logs: LogsQuery | undefined,
  capsGas: Route['capsGas'],
): Route {
  const pinned = spec.pinnedNeeds && pinnedBlock(spec, params, network.heads.finalized())
  const block = typeof pinned === 'bigint' ? pinned : undefined
  const range = typeof pinned === 'object' ? pinned : undefined
  return {
    partners,
    headSensitive: scope !== 'immutable' && !spec.nodeState,
    block: range ? range.to : block,
    fromBlock: range ? range.from : block,
    needsState: spec.pinnedNeeds === 'state',
    nullIsMissing: spec.nullWhenNoBlock && isBelowHead(network, pinned),
    retry: spec.idempotent,
    rawTransaction: spec.sendsTransaction ? (params[0] as string) : undefined,
    capsGas,
    checkLogs,
    logs,
  }
}

/**
 * Whose the `gas` of a call that caps gas is: the client's own figure as sent, or ours (none, the
 * node's default then, or the gas cap's). Undefined for the other methods.
 */
function gasOf(spec: MethodSpec, prepared: PreparedCall & { ok: true }, params: unknown[]): Route['capsGas'] {
  if (!spec.capsGas) return undefined
  if (params !== prepared.params) return 'ours'
  return typeof (params[0] as { gas?: unknown } | undefined)?.gas === 'string' ? 'client' : 'ours'
}

/** A block by hash, or by a number at or below the network's head: an upstream's null is not the last word. */
function isBelowHead(network: Network, pinned: PinnedBlock): boolean {
  if (pinned === 'hash') return true
  const head = network.pool.head()
  return typeof pinned === 'bigint' && head !== undefined && pinned <= head
}

function toCallAnswer(fetched: FetchedAnswer): CallAnswer {
  return fetched.partner ? new PartnerAnswer(fetched.body) : fetched.body
}

/** Where and how a call is sent, decided once per call. */
type Route = {
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
  rawTransaction: string | undefined
  /** Whose the gas of an eth_call or eth_estimateGas is (SendOptions.capsGas). */
  capsGas: 'ours' | 'client' | undefined
  checkLogs: LogsAnswerCheck | undefined
  /** An eth_getLogs query over known blocks, split when every upstream refuses its range. */
  logs: LogsQuery | undefined
}

/**
 * Sends a call to the network's upstreams and, when they fail and the call may fail over
 * (docs/compatibility.md §7: plan, header or key switch, eligible method), to its partners. The call's
 * deadline covers both: the upstreams get what the partners do not need. When every upstream and
 * partner answered a "cannot answer now" error, the last node's error is the answer; for an
 * eth_getLogs range refusal, the merged answer of the range split (splitLogsRange), for `id`.
 */
async function forward(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string | Buffer,
  id: RpcId,
  route: Route,
  cancellation: Cancellation | undefined,
): Promise<FetchedAnswer> {
  const { network } = ctx
  const { partners, checkLogs, logs } = route
  const options = sendOptions(ctx, route, cancellation)
  const { deadline } = options
  const atOnce = logs !== undefined && splitsAtOnce(network, logs)
  let fetched: FetchedAnswer
  if (atOnce) fetched = { body: await splitLogsRange(network, logs, undefined, id, options), partner: false }
  else if (!partners) fetched = { body: await network.pool.send(body, options), partner: false }
  else {
    try {
      const primary = { ...options, deadline: deadline - network.partnerReserveMs, fallback: true }
      fetched = { body: await network.pool.send(body, primary), partner: false }
    } catch (err) {
      if (!mayFailOver(err)) throw err
      ctx.log.debug(
        { network: network.name, method: spec.name, logDetails: err.logDetails },
        'partner failover',
      )
      // only the JSON-RPC body goes to the partner: no client headers, addresses or keys
      try {
        const partnerOptions = { ...options, headSensitive: false, answeredBy: undefined }
        fetched = { body: await partners.send(body, partnerOptions), partner: true }
      } catch (partnerErr) {
        // the upstreams' own word on what is missing beats a partner that did not answer
        if (err instanceof NodeErrorAnswer && !(partnerErr instanceof ClientGoneError)) {
          fetched = { body: err.answer, partner: false }
        } else throw partnerErr
      }
    }
  }
  if (logs && !atOnce && !fetched.partner && rangeRefusalOf(fetched.body)) {
    fetched = { body: await splitLogsRange(network, logs, fetched.body, id, options), partner: false }
  }
  checkLogs?.(fetched.body)
  return fetched
}

/**
 * A cache load: shared by every identical call in flight and not ended when its first client
 * leaves, so it holds what it takes in on a budget of its own until it ends (each caller then takes
 * the answer it is given on its own budget).
 */
function load(ctx: RpcContext, spec: MethodSpec, body: string, route: Route): Promise<FetchedAnswer> {
  const answerBudget = ctx.answerBudget.forShared()
  return forward({ ...ctx, answerBudget }, spec, body, 1, route, undefined).finally(() =>
    answerBudget.release(),
  )
}

/** How the network's pool sends a call: its deadline starts now. */
function sendOptions(
  ctx: RpcContext,
  { retry, headSensitive, block, fromBlock, needsState, nullIsMissing, rawTransaction, capsGas, logs }: Route,
  cancellation: Cancellation | undefined,
): SendOptions & { deadline: number } {
  return {
    deadline: performance.now() + ctx.network.timeoutMs,
    retry,
    headSensitive,
    block,
    fromBlock,
    needsState,
    nullIsMissing,
    rawTransaction,
    capsGas,
    cancellation,
    answerBudget: ctx.answerBudget,
    // eth_getLogs by range: whether every upstream refused it, for the limit splitLogsRange keeps
    answeredBy: logs ? { members: 0 } : undefined,
  }
}

/** An answer kept in memory (the cache's) is held by the request's budget too: a batch of them adds up. */
function holdKept(ctx: RpcContext, payload: RpcPayload): void {
  const bytes = payload instanceof AnswerParts ? payload.byteLength : payload.length
  const refusal = ctx.answerBudget.take(bytes)
  if (refusal) throw refusal
}

/**
 * eth_blockNumber: never less than what a client was already told (upstreams, and instances, may lag
 * each other), and a higher number only once it may be shown (shared, it waits until every instance
 * has heard of it: a promise then). A number asked for before the shown head was lowered since
 * (`lowers`: network.headLowers then) is of the chain before the rewind: never shown.
 */
function notBelowShownHead(
  network: Network,
  id: RpcId,
  payload: RpcPayload,
  lowers: number,
): RpcPayload | Promise<RpcPayload> {
  // the result is a short hex string: read from the answer's first bytes, without parsing it
  const number =
    readHexResult(payload instanceof AnswerParts ? payload.toBuffer() : payload) ?? parsedHexResult(payload)
  if (number === undefined) return payload
  const showing =
    number > network.shownHead && lowers === network.headLowers ? network.showHead(number) : undefined
  return showing
    ? showing.then(() => atLeastShownHead(network, id, payload, number))
    : atLeastShownHead(network, id, payload, number)
}

/** The result of an answer readHexResult could not read (a long id, say), if it is a hex quantity. */
function parsedHexResult(payload: RpcPayload): bigint | undefined {
  let result: unknown
  try {
    result = (JSON.parse(payload.toString()) as { result?: unknown }).result
  } catch {
    return undefined
  }
  return typeof result === 'string' && /^0x[0-9a-f]{1,16}$/i.test(result) ? BigInt(result) : undefined
}

/** The answer of `number`, or of the shown head when that is higher. */
function atLeastShownHead(network: Network, id: RpcId, payload: RpcPayload, number: bigint): RpcPayload {
  return number >= network.shownHead ? payload : serializeResult(id, `0x${network.shownHead.toString(16)}`)
}

/** A node's "not found" error, which methods with `nullWhenNotFound` answer as null (docs/compatibility.md §7). */
function saysNotFound(payload: RpcPayload): boolean {
  // a kept result in parts is a result, never an error
  if (payload instanceof AnswerParts) return false
  const error = readNodeError(payload)
  return error !== undefined && isNotFoundError(error)
}

/** Who the filters of this call's key, network and contract allowlists belong to. */
function filterOwner(ctx: RpcContext): FilterOwner {
  return { keyId: ctx.key.subject.keyId, network: ctx.network.name, guard: ctx.guard }
}

/** A new filter's answer with the id sealed to its owner; an error (or anything else) as it came. */
function sealedFilter(ctx: RpcContext, id: RpcId, payload: RpcPayload, partner: boolean): CallAnswer {
  let result: unknown
  try {
    result = (JSON.parse(payload.toString()) as { result?: unknown }).result
  } catch {
    return partner ? new PartnerAnswer(payload) : payload
  }
  if (typeof result !== 'string') return partner ? new PartnerAnswer(payload) : payload
  return local(id, ctx.filterIds.seal(result, filterOwner(ctx)), partner)
}

function local(id: RpcId, result: unknown, partner = false): CallAnswer {
  const payload = serializeResult(id, result)
  return partner ? new PartnerAnswer(payload) : payload
}
