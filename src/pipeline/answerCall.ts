import { cacheScope } from '../cache/cacheScope.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { answerLike, type CallAnswer, payloadOf } from '../jsonrpc/PartnerAnswer.ts'
import { readNodeError } from '../jsonrpc/readNodeError.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { boundLogs } from './boundLogs.ts'
import type { ChunkCharge } from './CallCharge.ts'
import { capGas } from './capGas.ts'
import { fetchAnswer } from './fetchAnswer.ts'
import { filterOwner } from './filterOwner.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import { notBelowShownHead } from './notBelowShownHead.ts'
import type { PreparedCall } from './prepareCall.ts'
import { routeOf } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'

type ReadyCall = PreparedCall & { ok: true }

/**
 * One prepared call's answer, step by step: answered here (a local result, a subscription, the head
 * model's eth_blockNumber); made
 * ready to send (the gas cap, the logs range bound; prepareCall put a named filter's node id in);
 * routed; from the cache or the upstreams, the partners, a split range (fetchAnswer); then the
 * docs/compatibility.md §7 duties on the answer (a new filter's id sealed, "not found" as null, the
 * shown head). Rejects with TollgateErrors; the caller turns them into wire errors. `trail`, when
 * given, records the cache's part and every upstream attempt (the route header, a trace); `charge`
 * counts the node calls a split range takes, each held against the key before it is sent.
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
  const known = spec.monotonicHead && network.cache ? network.head.blockNumber() : undefined
  if (known !== undefined) {
    // eth_blockNumber: the head model's own, no node asked (with the cache off, every call goes to one)
    trail?.usedCache('hit')
    return notBelowShownHead(network, call.id, local(call.id, `0x${known.toString(16)}`), lowers)
  }

  let { params } = prepared
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
  if (spec.monotonicHead) return notBelowShownHead(network, call.id, answer, lowers)
  return answer
}

/** A subscription's id or end (WebSocket only: prepareCall refuses these calls elsewhere). */
function subscription(ctx: RpcContext, { call, spec, params }: ReadyCall): CallAnswer {
  const subscriptions = ctx.subscriptions as NonNullable<RpcContext['subscriptions']>
  const result =
    spec.name === 'eth_subscribe' ? subscriptions.subscribe(params) : subscriptions.unsubscribe(params[0])
  return local(call.id, result)
}

/** A node's "not found" error: methods with `nullWhenNotFound` answer it as null (docs/compatibility.md §7). */
function saysNotFound(answer: CallAnswer): boolean {
  const payload = payloadOf(answer)
  // a kept result in parts is a result, never an error
  if (payload instanceof AnswerParts) return false
  const error = readNodeError(payload)
  return error !== undefined && isNotFoundError(error)
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
