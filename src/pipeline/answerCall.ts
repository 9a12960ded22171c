import type { FilterOwner } from '../auth/createFilterIds.ts'
import { cacheScope } from '../cache/cacheScope.ts'
import { FilterNotFoundError } from '../errors/rpcErrors.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { answerLike, type CallAnswer, payloadOf } from '../jsonrpc/PartnerAnswer.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { readNodeError } from '../upstreams/nodeErrors.ts'
import { boundLogs } from './boundLogs.ts'
import type { ChunkCharge } from './CallCharge.ts'
import { capGas } from './capGas.ts'
import { fetchAnswer } from './fetchAnswer.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import { notBelowShownHead } from './notBelowShownHead.ts'
import type { PreparedCall } from './prepareCall.ts'
import { routeOf } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'

type ReadyCall = PreparedCall & { ok: true }

/**
 * One prepared call's answer, step by step: answered here (a local result, a subscription); made
 * ready to send (a named filter's node id, the gas cap, the logs range bound); routed; from the cache
 * or the upstreams, the partners, a split range (fetchAnswer); then the docs/compatibility.md §7
 * duties on the answer (a new filter's id sealed, "not found" as null, the shown head). Rejects with
 * TollgateErrors; the caller turns them into wire errors. `trail`, when given, records the cache's
 * part and every upstream attempt (the route header, a trace); `charge` counts the node calls a
 * split range takes, each held against the key before it is sent.
 */
export async function answerCall(
  ctx: RpcContext,
  prepared: ReadyCall,
  trail: CallTrail | undefined,
  charge: ChunkCharge,
): Promise<CallAnswer> {
  const { call, spec } = prepared
  const { network } = ctx
  if (spec.localResult) return local(call.id, spec.localResult())
  if (spec.subscriptionOnly) return subscription(ctx, prepared)
  // an answer asked for before a lower of the shown head is not shown (see notBelowShownHead)
  const lowers = network.head.lowers

  let { params } = prepared
  if (spec.filterRole === 'reads' || spec.filterRole === 'removes') {
    const nodeFilter = openFilter(ctx, params)
    if (nodeFilter === undefined) return unknownFilter(call.id, spec)
    params = nodeFilter
  }
  if (spec.capsGas) {
    // the gas cap needs the head: asked for first when none is known yet
    if (!network.head.latest()) await network.head.poll()
    const head = network.head.latest()
    if (head) params = capGas(params, head, network)
  }
  const bounded = spec.boundsBlockRange ? await boundLogs(network, params[0]) : undefined

  const scope = cacheScope(spec, params, network.head.finalized())
  const route = routeOf(ctx, prepared, params, scope, bounded)
  const answer = await fetchAnswer(ctx, prepared, params, scope, route, trail, charge)

  if (spec.filterRole === 'makes') return sealedFilter(ctx, call.id, answer)
  if (spec.nullWhenNotFound && saysNotFound(answer)) return answerLike(answer, local(call.id, null))
  if (spec.monotonicHead) return await notBelowShownHead(network, call.id, answer, lowers)
  return answer
}

/** A subscription's id or end (WebSocket only: prepareCall refuses these calls elsewhere). */
function subscription(ctx: RpcContext, { call, spec, params }: ReadyCall): CallAnswer {
  const subscriptions = ctx.subscriptions as NonNullable<RpcContext['subscriptions']>
  const result =
    spec.name === 'eth_subscribe' ? subscriptions.subscribe(params) : subscriptions.unsubscribe(params[0])
  return local(call.id, result)
}

/**
 * The params of a call that names a filter, with the node's id for the client's; undefined when the
 * key did not make it.
 */
function openFilter(ctx: RpcContext, params: unknown[]): unknown[] | undefined {
  const nodeId = typeof params[0] === 'string' ? ctx.filterIds.open(params[0], filterOwner(ctx)) : undefined
  return nodeId === undefined ? undefined : [nodeId]
}

/** A filter this key did not make is unknown to it: answered as the node answers one, not forwarded. */
function unknownFilter(id: RpcId, spec: MethodSpec): CallAnswer {
  if (spec.filterRole === 'removes') return local(id, false)
  throw new FilterNotFoundError()
}

/** A node's "not found" error: methods with `nullWhenNotFound` answer it as null (docs/compatibility.md §7). */
function saysNotFound(answer: CallAnswer): boolean {
  const payload = payloadOf(answer)
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
function sealedFilter(ctx: RpcContext, id: RpcId, answer: CallAnswer): CallAnswer {
  let result: unknown
  try {
    result = (JSON.parse(payloadOf(answer).toString()) as { result?: unknown }).result
  } catch {
    return answer
  }
  if (typeof result !== 'string') return answer
  return answerLike(answer, serializeResult(id, ctx.filterIds.seal(result, filterOwner(ctx))))
}

/** An answer of the gateway's own. */
function local(id: RpcId, result: unknown): RpcPayload {
  return serializeResult(id, result)
}
