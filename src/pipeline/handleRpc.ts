import type { FilterOwner } from '../auth/createFilterIds.ts'
import { type CacheScope, cacheScope } from '../cache/cacheScope.ts'
import { type FetchedAnswer, type RpcCache, resultAnswer } from '../cache/createRpcCache.ts'
import { FilterNotFoundError } from '../errors/rpcErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { asWrittenBody } from '../jsonrpc/parseRpcRequest.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcCall, RpcId, RpcPayload } from '../jsonrpc/types.ts'
import { withId } from '../jsonrpc/withId.ts'
import type { FilterRole, MethodSpec } from '../methods/methodTable.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { readNodeError } from '../upstreams/nodeErrors.ts'
import type { SendOptions } from '../upstreams/SendOptions.ts'
import { sendWithPartners } from '../upstreams/sendWithPartners.ts'
import { type BoundedLogs, boundLogs } from './boundLogs.ts'
import { capGas } from './capGas.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import { notBelowShownHead } from './notBelowShownHead.ts'
import type { PreparedCall } from './prepareCall.ts'
import { type Route, routeOf } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'
import { rangeRefusalOf, splitLogsRange, splitsAtOnce } from './splitLogsRange.ts'

/** An answer a partner provider gave (docs/compatibility.md §7 failover). */
export class PartnerAnswer {
  constructor(readonly payload: RpcPayload) {}
}

/** A call's answer: its payload, or a partner's answer (which the client is told of). */
export type CallAnswer = RpcPayload | PartnerAnswer

type ReadyCall = PreparedCall & { ok: true }

/**
 * Runs one prepared call, step by step: answered here (a local result, a subscription); made ready to
 * send (a named filter's node id, the gas cap, the logs range bound); routed; answered from the cache
 * or forwarded (the upstreams, then the partners); then the docs/compatibility.md §7 duties on the
 * answer (a new filter's id sealed, "not found" as null, the shown head). Which of the steps around
 * the send a method needs is worked out once, in the method table (MethodSpec.duties). Upstream
 * answers are returned as the bytes the node sent, parsed only when a duty must look inside. Rejects
 * with TollgateErrors; the caller turns them into wire errors. `trail`, when given, records the
 * cache's part and every upstream attempt (the route header, a trace).
 */
export async function handleRpc(
  ctx: RpcContext,
  prepared: ReadyCall,
  trail: CallTrail | undefined,
): Promise<CallAnswer> {
  const { call, spec } = prepared
  const { network } = ctx
  if (spec.duties.answerHere) {
    const answer = answerHere(ctx, prepared)
    if (answer !== undefined) return answer
  }
  // an answer asked for before a lower of the shown head is not shown (see notBelowShownHead)
  const lowers = network.head.lowers
  let { params } = prepared
  let bounded: BoundedLogs | undefined
  if (spec.duties.beforeSend) {
    const nodeFilter = openFilter(ctx, spec.filterRole, params)
    if (nodeFilter === 'unknown') return unknownFilter(call.id, spec)
    // the gas cap needs the head: asked for first when none is known yet
    if (spec.capsGas && !network.head.latest()) await network.heads.poll()
    params = cappedGas(network, spec, nodeFilter ?? params)
    bounded = spec.boundsBlockRange ? await boundLogs(network, params[0]) : undefined
  }
  const scope = cacheScope(spec, params, network.head.finalized())
  const route = routeOf(ctx, prepared, params, scope, bounded)
  const answer =
    network.cache && scope !== 'never'
      ? await cachedAnswer(ctx, network.cache, prepared, params, scope, route, trail)
      : toCallAnswer(
          await forward(ctx, spec, bodyOf(prepared, params), call.id, route, ctx.cancellation, trail),
        )
  if (!spec.duties.afterAnswer) return answer
  const done = afterAnswer(ctx, call.id, spec, answer)
  return spec.monotonicHead ? await shownHead(network, call.id, done, lowers) : done
}

/** A local result, or a subscription's id or end (WebSocket only); undefined for any other call. */
function answerHere(ctx: RpcContext, { call, spec, params }: ReadyCall): CallAnswer | undefined {
  if (spec.localResult) return local(call.id, spec.localResult())
  if (!spec.subscriptionOnly || !ctx.subscriptions) return undefined
  const result =
    spec.name === 'eth_subscribe'
      ? ctx.subscriptions.subscribe(params)
      : ctx.subscriptions.unsubscribe(params[0])
  return local(call.id, result)
}

/**
 * The params of a call that names a filter, with the node's id for the client's; `unknown` when the
 * key did not make the filter; undefined for the other calls.
 */
function openFilter(
  ctx: RpcContext,
  role: FilterRole | undefined,
  params: unknown[],
): unknown[] | 'unknown' | undefined {
  if (role !== 'reads' && role !== 'removes') return undefined
  const nodeId = typeof params[0] === 'string' ? ctx.filterIds.open(params[0], filterOwner(ctx)) : undefined
  return nodeId === undefined ? 'unknown' : [nodeId]
}

/** A filter this key did not make is unknown to it: answered as the node answers one, not forwarded. */
function unknownFilter(id: RpcId, spec: MethodSpec): CallAnswer {
  if (spec.filterRole === 'removes') return local(id, false)
  throw new FilterNotFoundError()
}

/** The params with `gas` lowered to the cap, for a method that caps gas, when the head is known. */
function cappedGas(network: Network, spec: MethodSpec, params: unknown[]): unknown[] {
  const head = spec.capsGas ? network.head.latest() : undefined
  return head ? capGas(params, head, network) : params
}

/**
 * A cached call: the kept answer, or one upstream call for every identical call in flight (it must
 * not end when one client leaves). Calls that may fail over share loads only with each other: a key
 * that may not must never get a partner's answer, and one that may must not be held to a load that
 * will not ask the partners.
 */
async function cachedAnswer(
  ctx: RpcContext,
  cache: RpcCache,
  { call, spec }: ReadyCall,
  params: unknown[],
  scope: Exclude<CacheScope, 'never'>,
  route: Route,
  trail: CallTrail | undefined,
): Promise<CallAnswer> {
  // the params are serialised once: for the cache key and the upstream body alike
  const paramsJson = JSON.stringify(params)
  const key = `${spec.name}${paramsJson}`
  const hit = cache.get(key, scope, call.id)
  if (hit !== undefined) {
    trail?.usedCache('hit')
    holdKept(ctx, hit)
    return hit
  }
  const body = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(call.method)},"params":${paramsJson}}`
  // a call that joins another's load (or finds its answer kept by then) makes no attempt of its own
  let loading = false
  const loaded = await cache.load(
    key,
    scope,
    () => {
      loading = true
      trail?.usedCache('miss')
      return load(ctx, spec, body, route, trail)
    },
    route.partners ? 'failover' : undefined,
  )
  if (!loading) trail?.usedCache('joined')
  const payload = 'result' in loaded ? resultAnswer(call.id, loaded.result) : withId(loaded.answer, call.id)
  holdKept(ctx, payload)
  return loaded.partner === true ? new PartnerAnswer(payload) : payload
}

/**
 * The body sent for a call with `params` (its prepared params, or the gas cap's): the client's own
 * text when nothing in it changed (the id kept as written); else written anew.
 */
function bodyOf(prepared: ReadyCall, params: unknown[]): string | Buffer {
  const { call } = prepared
  const unchanged = params === prepared.params && prepared.paramsAsSent
  return (unchanged ? asWrittenBody(call) : undefined) ?? writtenBody(call, params)
}

function writtenBody(call: RpcCall, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: '2.0', id: call.id, method: call.method, params })
}

function toCallAnswer(fetched: FetchedAnswer): CallAnswer {
  return fetched.partner ? new PartnerAnswer(fetched.body) : fetched.body
}

/**
 * Sends a call to the network's upstreams, and, when it may fail over, to its partners if they fail
 * (sendWithPartners); for an eth_getLogs range every upstream refuses, the merged answer of the
 * range split (splitLogsRange), for `id`; an eth_getLogs answer's logs then counted.
 */
async function forward(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string | Buffer,
  id: RpcId,
  route: Route,
  cancellation: Cancellation | undefined,
  trail: CallTrail | undefined,
): Promise<FetchedAnswer> {
  const { network } = ctx
  const { checkLogs, logs } = route
  const options = sendOptions(ctx, route, cancellation, trail)
  const atOnce = logs !== undefined && splitsAtOnce(network, logs)
  let fetched: FetchedAnswer
  if (atOnce) fetched = { body: await splitLogsRange(network, logs, undefined, id, options), partner: false }
  else if (!route.partners) fetched = { body: await network.pool.send(body, options), partner: false }
  else {
    fetched = await sendWithPartners(body, options, {
      pool: network.pool,
      partners: route.partners,
      partnerReserveMs: network.partnerReserveMs,
      onFailover: ({ logDetails }) =>
        ctx.log.debug({ network: network.name, method: spec.name, logDetails }, 'partner failover'),
    })
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
function load(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string,
  route: Route,
  trail: CallTrail | undefined,
): Promise<FetchedAnswer> {
  const answerBudget = ctx.answerBudget.forShared()
  return forward({ ...ctx, answerBudget }, spec, body, 1, route, undefined, trail).finally(() =>
    answerBudget.release(),
  )
}

/** How the network's pool sends a call: its deadline starts now (a node's wait for a receipt beyond it). */
function sendOptions(
  ctx: RpcContext,
  { retry, headSensitive, block, fromBlock, needsState, nullIsMissing, rawTransaction, capsGas, logs }: Route,
  cancellation: Cancellation | undefined,
  trail: CallTrail | undefined,
): SendOptions & { deadline: number } {
  return {
    deadline: performance.now() + ctx.network.timeoutMs + (rawTransaction?.receiptWaitMs ?? 0),
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
    trail,
  }
}

/** An answer kept in memory (the cache's) is held by the request's budget too: a batch of them adds up. */
function holdKept(ctx: RpcContext, payload: RpcPayload): void {
  const bytes = payload instanceof AnswerParts ? payload.byteLength : payload.length
  const refusal = ctx.answerBudget.take(bytes)
  if (refusal) throw refusal
}

/**
 * The duties on an answer (a partner's too, which stays one): a new filter's id sealed to its
 * owner, a node's "not found" as null. eth_blockNumber's (shownHead) may wait: its own step.
 */
function afterAnswer(ctx: RpcContext, id: RpcId, spec: MethodSpec, answer: CallAnswer): CallAnswer {
  const partner = answer instanceof PartnerAnswer
  const payload = answer instanceof PartnerAnswer ? answer.payload : answer
  if (spec.filterRole === 'makes') return sealedFilter(ctx, id, payload, partner)
  if (spec.nullWhenNotFound && saysNotFound(payload)) return local(id, null, partner)
  return answer
}

/** eth_blockNumber's answer never below the shown head (notBelowShownHead); a partner's stays one. */
async function shownHead(
  network: Network,
  id: RpcId,
  answer: CallAnswer,
  lowers: number,
): Promise<CallAnswer> {
  if (!(answer instanceof PartnerAnswer)) return await notBelowShownHead(network, id, answer, lowers)
  return new PartnerAnswer(await notBelowShownHead(network, id, answer.payload, lowers))
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
