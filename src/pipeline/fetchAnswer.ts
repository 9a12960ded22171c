import { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import type { CacheScope } from '../cache/cacheScope.ts'
import { type CacheKeep, cacheKey, type RpcCache } from '../cache/createRpcCache.ts'
import { resultAnswer } from '../cache/keptResults.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { type CallAnswer, PartnerAnswer, payloadOf, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import { asWrittenBody } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcCall, RpcPayload } from '../jsonrpc/types.ts'
import { withId } from '../jsonrpc/withId.ts'
import type { KeyCalls } from '../metering/CallsInFlight.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import type { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import type { SendOptions } from '../upstreams/SendOptions.ts'
import { sendWithPartners } from '../upstreams/sendWithPartners.ts'
import { blockHashParam, byBlockHash } from './byBlockHash.ts'
import type { ChunkCharge } from './CallCharge.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { Route } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'
import { type LogsQuery, rangeRefusalOf, splitLogsRange, splitsAtOnce } from './splitLogsRange.ts'

type ReadyCall = PreparedCall & { ok: true }

/**
 * A call's answer from outside the gateway: kept by the cache (`scope` is not `never` and the network
 * has one), else forwarded, with `params` (its prepared params, or as made ready to send). Upstream
 * answers are the bytes the node sent. An eth_getLogs range every upstream refuses (or one wider
 * than they were seen to answer lately) is split by the call itself, not by a load it may share
 * with other keys' calls: its chunks are its key's work, each held by `charge` before it is sent.
 */
export function fetchAnswer(
  ctx: RpcContext,
  prepared: ReadyCall,
  params: unknown[],
  scope: CacheScope,
  route: Route,
  trail: CallTrail | undefined,
  charge: ChunkCharge,
): Promise<CallAnswer> {
  if (!route.logs) return wholeAnswer(ctx, prepared, params, scope, route, trail)
  return logsAnswer(ctx, prepared, params, scope, route, trail, charge)
}

/**
 * An eth_getLogs range (`route.logs`): asked whole, or split at once when known to be too wide, or
 * split after every upstream refused it.
 */
async function logsAnswer(
  ctx: RpcContext,
  prepared: ReadyCall,
  params: unknown[],
  scope: CacheScope,
  route: Route,
  trail: CallTrail | undefined,
  charge: ChunkCharge,
): Promise<CallAnswer> {
  const logs = route.logs as LogsQuery
  // the call's one deadline, a split's chunks included
  const split = { deadline: performance.now() + ctx.network.timeoutMs, trail, charge }
  if (splitsAtOnce(ctx.network, logs)) return splitLogs(ctx, prepared, route, undefined, split)
  const answer = await wholeAnswer(ctx, prepared, params, scope, route, trail)
  const refusal = answer instanceof PartnerAnswer ? undefined : refusalIn(payloadOf(answer))
  return refusal ? splitLogs(ctx, prepared, route, refusal, split) : answer
}

/** The call asked as it is: from the cache, else forwarded. */
function wholeAnswer(
  ctx: RpcContext,
  prepared: ReadyCall,
  params: unknown[],
  scope: CacheScope,
  route: Route,
  trail: CallTrail | undefined,
): Promise<CallAnswer> {
  const { cache } = ctx.network
  if (cache && scope !== 'never') return cachedAnswer(ctx, cache, prepared, params, scope, route, trail)
  const options = sendOptions(ctx, route, ctx.cancellation, ctx.answerBudget, trail)
  return inSlot(ctx, () => forward(ctx, prepared.spec, bodyOf(prepared, params), route, options))
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
  const { key, keep, askByHash } = cachePlace(ctx, spec, paramsJson, scope, route)
  const hit = cache.get(key, keep, call.id)
  if (hit !== undefined) {
    trail?.usedCache('hit')
    holdKept(ctx, hit)
    return hit
  }
  // a miss pinned to a block: asked by that block's hash (the params written anew once, here)
  const sentParams = askByHash ? JSON.stringify(byBlockHash(spec, params, askByHash)) : paramsJson
  const body = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(call.method)},"params":${sentParams}}`
  // a call that joins another's load (or finds its answer kept by then) makes no attempt of its own
  let loading = false
  // the caller's own slot while it waits, its own load or another's
  const loaded = await inSlot(ctx, () =>
    cache.load(
      key,
      keep,
      () => {
        loading = true
        trail?.usedCache('miss')
        return load(ctx, spec, body, route, trail)
      },
      route.partners ? 'failover' : undefined,
    ),
  )
  if (!loading) trail?.usedCache('joined')
  const payload = 'result' in loaded ? resultAnswer(call.id, loaded.result) : withId(loaded.answer, call.id)
  holdKept(ctx, payload)
  return loaded.partner === true ? new PartnerAnswer(payload) : payload
}

/**
 * Where a call's answer is kept. Pinned to a block number the chain has (`block`): under that
 * block's hash for as long as it stays on the chain (with Redis, by every instance), the node asked
 * for that block by its hash where the method takes one (`askByHash`), else kept so only when its
 * answer names that block (`pinned`: a block, its transactions,
 * logs that reach it), until the next head otherwise; while the chain does not have the block (above
 * its tip, older than it remembers), until the next head. Else by its scope.
 */
function cachePlace(
  ctx: RpcContext,
  spec: MethodSpec,
  paramsJson: string,
  scope: Exclude<CacheScope, 'never'>,
  route: Route,
): { key: string; keep: CacheKeep; askByHash?: string } {
  const hash =
    scope === 'block' && route.block !== undefined ? ctx.network.head.hashAt(route.block) : undefined
  if (hash === undefined)
    return { key: cacheKey(spec.name, paramsJson), keep: scope === 'block' ? 'head' : scope }
  const key = cacheKey(spec.name, paramsJson, hash)
  return blockHashParam(spec) === undefined
    ? { key, keep: 'pinned' }
    : { key, keep: 'immutable', askByHash: hash }
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
): Promise<SentAnswer> {
  const answerBudget = ctx.answerBudget.forShared()
  const options = sendOptions(ctx, route, undefined, answerBudget, trail)
  return forward(ctx, spec, body, route, options).finally(() => answerBudget.release())
}

/**
 * Sends a call to the network's upstreams and, when it may fail over, to its partners if they fail
 * (sendWithPartners); an eth_getLogs call goes through forwardLogs.
 */
function forward(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string | Buffer,
  route: Route,
  options: SendOptions & { deadline: number },
): Promise<SentAnswer> {
  if (route.checkLogs) return forwardLogs(ctx, spec, body, route, options)
  return send(ctx, spec, body, route, options)
}

/**
 * Runs `work`, what a call asks of the upstreams (its own attempt, its wait for a shared load, a
 * split range), in one of its key's slots (CallsInFlight: the key's calls in flight at the upstreams
 * are bounded by its plan), given back when the work ends. When the key has none free it waits for
 * one while a tenth of the network's timeoutMs is still left: a node is not sent a call it has no
 * time to answer. Each caller takes its own, never a load shared with other keys' calls: one key's
 * full slots never hold another's.
 */
function inSlot<T>(ctx: RpcContext, work: () => Promise<T>): Promise<T> {
  const { callsInFlight, network } = ctx
  const wait = { deadline: performance.now() + network.timeoutMs * 0.9, cancellation: ctx.cancellation }
  const slot = callsInFlight.enter(ctx.key.subject.keyId, ctx.maxCallsInFlight, wait)
  if (slot instanceof Promise) return slot.then((calls) => workInSlot(ctx, calls, work))
  return workInSlot(ctx, slot, work)
}

/**
 * `work` in the slot `calls`, given back as it ends: `work`'s own promise is the caller's, the slot
 * let go beside it (its reaction runs before the caller's); a link in the chain would pass the
 * answer through one more promise.
 */
function workInSlot<T>(ctx: RpcContext, calls: KeyCalls, work: () => Promise<T>): Promise<T> {
  const leave = () => ctx.callsInFlight.leave(calls)
  let done: Promise<T>
  try {
    done = work()
  } catch (err) {
    leave()
    throw err
  }
  // the rejection is the caller's to handle: this reaction only lets the slot go
  done.then(leave, leave)
  return done
}

/**
 * An eth_getLogs call: its logs counted; a range every upstream refused goes back as it is, for the
 * call to split (fetchAnswer).
 */
async function forwardLogs(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string | Buffer,
  route: Route,
  options: SendOptions & { deadline: number },
): Promise<SentAnswer> {
  const answer = await send(ctx, spec, body, route, options)
  if (route.logs && !(answer instanceof PartnerAnswer) && rangeRefusalOf(answer)) return answer
  route.checkLogs?.(payloadOf(answer) as Buffer)
  return answer
}

/**
 * The merged answer of an eth_getLogs range split (splitLogsRange) for the call, after `refusal`
 * (undefined: split at once), its chunks sent as the call's own (its deadline, its client, its
 * answer budget); its logs then counted.
 */
async function splitLogs(
  ctx: RpcContext,
  { call }: ReadyCall,
  route: Route,
  refusal: Buffer | undefined,
  { deadline, trail, charge }: { deadline: number; trail: CallTrail | undefined; charge: ChunkCharge },
): Promise<CallAnswer> {
  const options = { ...sendOptions(ctx, route, ctx.cancellation, ctx.answerBudget, trail), deadline }
  const logs = route.logs as LogsQuery
  // a split is one call: one slot, its chunks held to its key's rate by `charge`
  const answer = await inSlot(ctx, () => splitLogsRange(ctx.network, logs, refusal, call.id, options, charge))
  route.checkLogs?.(answer)
  return answer
}

/** An eth_getLogs range refusal in a call's answer, as bytes; undefined for any other answer. */
function refusalIn(payload: RpcPayload): Buffer | undefined {
  if (payload instanceof AnswerParts) return undefined
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload
  return rangeRefusalOf(bytes) ? bytes : undefined
}

/** To the network's upstreams; for a call that may fail over, to its partners when they fail. */
function send(
  ctx: RpcContext,
  spec: MethodSpec,
  body: string | Buffer,
  { partners }: Route,
  options: SendOptions & { deadline: number },
): Promise<SentAnswer> {
  const { network } = ctx
  if (!partners) return network.pool.send(body, options)
  return sendWithPartners(body, options, {
    pool: network.pool,
    partners,
    partnerReserveMs: network.partnerReserveMs,
    onFailover: ({ logDetails }) =>
      ctx.log.debug({ network: network.name, method: spec.name, logDetails }, 'partner failover'),
  })
}

/**
 * How the network's pool sends a call: its deadline starts now (a node's wait for a receipt beyond
 * it); what it takes in is held on `answerBudget` (the request's, or a shared load's own).
 */
function sendOptions(
  ctx: RpcContext,
  {
    retry,
    headSensitive,
    block,
    fromBlock,
    needsState,
    nullIsMissing,
    rawTransaction,
    capsGas,
    logsAnsweredBy,
  }: Route,
  cancellation: Cancellation | undefined,
  answerBudget: AnswerBudget,
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
    answerBudget,
    // eth_getLogs by range: whether every upstream refused it, for the width splitLogsRange learns
    answeredBy: logsAnsweredBy,
    trail,
  }
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

/** An answer kept in memory (the cache's) is held by the request's budget too: a batch of them adds up. */
function holdKept(ctx: RpcContext, payload: RpcPayload): void {
  const bytes = payload instanceof AnswerParts ? payload.byteLength : payload.length
  const refusal = ctx.answerBudget.take(bytes)
  if (refusal) throw refusal
}
