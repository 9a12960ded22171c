import { performance } from 'node:perf_hooks'
import { cacheScope } from '../cache/cacheScope.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { answerLike, type CallAnswer, PartnerAnswer, payloadOf } from '../jsonrpc/PartnerAnswer.ts'
import { readNodeError } from '../jsonrpc/readNodeError.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import { priceOf } from '../methods/priceOf.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { boundLogs } from './boundLogs.ts'
import { CallCharge } from './CallCharge.ts'
import { capGas } from './capGas.ts'
import { errorAnswer } from './errorAnswer.ts'
import { fetchAnswer } from './fetchAnswer.ts'
import { filterOwner } from './filterOwner.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import { notBelowShownHead } from './notBelowShownHead.ts'
import type { PreparedCall } from './prepareCall.ts'
import { routeOf } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'

type ReadyCall = PreparedCall & { ok: true }

/** How one call of a request ended: its answer, and what it costs (priceOf's question). */
export type CallOutcome = {
  payload: RpcPayload
  httpStatus: number
  /** What the key is charged for it: the price of its outcome (priceOf), decided once, here. */
  credits: number
  /** The method usage is recorded under (`(invalid)` for one that is not ours). */
  method: string
  isNotification: boolean
  /** A partner provider answered it (docs/compatibility.md §7 failover). */
  partner: boolean
  /** A failure's own headers (a busy server's Retry-After): a single call's answer carries them. */
  errorHeaders: string[] | undefined
  /** What it did on its way (upstream attempts, the cache), when the request keeps trails. */
  trail: CallTrail | undefined
  /** What refused or failed it (the request log's reason); undefined when it was answered. */
  error: unknown
  /**
   * performance.now() when its outcome was decided (a batch's calls each at their own), when the
   * request keeps trails (the request log reads it: its duration); else 0.
   */
  endedMs: number
}

/**
 * One call's outcome, step by step: refused before it ran (its error, at once); else answered here
 * (a local result, a subscription, the head model's eth_blockNumber), or made ready to send (the gas
 * cap, the logs range bound; prepareCall put a named filter's node id in), routed, from the cache or
 * the upstreams, the partners, a split range (fetchAnswer), then the docs/compatibility.md §7 duties
 * on the answer (a new filter's id sealed, "not found" as null, the shown head); priced by how it
 * ended, answered or failed (one async function: each step that waits is one await, no promise
 * between the steps). Its trail, when the request keeps trails (the route header, a trace, the
 * request log), records the cache's part and every upstream attempt, and is ended here; `charge`
 * counts the node calls a split range takes, each held against the key before it is sent.
 */
export async function callOutcome(ctx: RpcContext, prepared: PreparedCall): Promise<CallOutcome> {
  if (!prepared.ok) return refused(ctx, prepared)
  const { call, spec } = prepared
  const { network } = ctx
  const trail = ctx.trails?.start(spec.name, network.name)
  // a split eth_getLogs' node calls, each chunk held as it goes
  const charge = new CallCharge(ctx.credits, spec.costCredits)
  let answer: CallAnswer
  try {
    // answered here: a local result, a subscription
    if (spec.localResult) answer = local(call.id, spec.localResult())
    else if (spec.subscriptionOnly) answer = subscription(ctx, prepared)
    else {
      // an answer asked for before a lower of the shown head is not shown (see notBelowShownHead)
      const lowers = network.head.lowers
      const known = spec.monotonicHead && network.cache ? network.head.blockNumber() : undefined
      if (known !== undefined) {
        // eth_blockNumber: the head model's own, no node asked (with the cache off, every call goes to one)
        trail?.usedCache('hit')
        answer = local(call.id, `0x${known.toString(16)}`)
      } else {
        // made ready to send
        let { params } = prepared
        if (spec.capsGas) {
          // the gas cap needs the head: asked for first when none is known yet
          if (!network.head.latest()) await network.head.poll()
          const head = network.head.latest()
          if (head) params = capGas(params, head, network)
        }
        const bounded = spec.boundsBlockRange ? await boundLogs(network, params[0]) : undefined
        // routed, and asked
        const scope = cacheScope(spec, params, network.head.finalized())
        const route = routeOf(ctx, prepared, params, scope, bounded)
        answer = await fetchAnswer(ctx, prepared, params, scope, route, trail, charge)
      }
      // its duties, awaited only when one waits (a higher head waiting to be shown)
      const done = withDuties(ctx, prepared, answer, lowers)
      answer = done instanceof Promise ? await done : done
    }
  } catch (err) {
    return failed(ctx, prepared, err, trail, charge)
  }
  return answered(ctx, prepared, answer, trail, charge)
}

/** The docs/compatibility.md §7 duties on an answer: a new filter's id sealed, "not found" as null, the shown head. */
function withDuties(
  ctx: RpcContext,
  { call, spec }: ReadyCall,
  answer: CallAnswer,
  lowers: number,
): CallAnswer | Promise<CallAnswer> {
  if (spec.filterRole === 'makes') return sealedFilter(ctx, call.id, answer)
  if (spec.nullWhenNotFound && saysNotFound(answer)) return answerLike(answer, local(call.id, null))
  if (spec.monotonicHead) return notBelowShownHead(ctx.network, call.id, answer, lowers)
  return answer
}

/** A call refused before it ran: its answer (an error, mostly), at the price of its refusal. */
function refused(ctx: RpcContext, prepared: PreparedCall & { ok: false }): CallOutcome {
  const { id, answer } = prepared
  const { payload, httpStatus } =
    answer === false
      ? { payload: serializeResult(id, false), httpStatus: 200 }
      : errorAnswer(ctx.log, id, answer)
  return {
    payload,
    httpStatus,
    credits: priceOf({ kind: 'refusedCall', reason: prepared.reason }),
    method: prepared.method,
    isNotification: prepared.isNotification,
    partner: false,
    errorHeaders: undefined,
    trail: undefined,
    error: answer === false ? undefined : answer,
    endedMs: ctx.trails ? performance.now() : 0,
  }
}

/** A call answered (a node's error answer, a revert among them): the method's price (a split's, for each node call). */
function answered(
  ctx: RpcContext,
  { call, spec }: ReadyCall,
  answer: CallAnswer,
  trail: CallTrail | undefined,
  { splitCalls }: CallCharge,
): CallOutcome {
  const partner = answer instanceof PartnerAnswer
  const credits = priceOf({ kind: 'served', spec, splitCalls })
  const status = 200
  if (trail) ctx.trails?.end(trail, { status, credits, partner, error: undefined, clientGone: false })
  return {
    payload: payloadOf(answer),
    httpStatus: status,
    credits,
    method: spec.name,
    isNotification: call.isNotification,
    partner,
    errorHeaders: undefined,
    trail,
    error: undefined,
    endedMs: trail ? performance.now() : 0,
  }
}

/**
 * A call that ran and failed without a node's answer: priced by its failure, or by the node calls
 * of its split; a client gone is no error.
 */
function failed(
  ctx: RpcContext,
  { call, spec }: ReadyCall,
  err: unknown,
  trail: CallTrail | undefined,
  { splitCalls }: CallCharge,
): CallOutcome {
  const { payload, httpStatus, headers } = errorAnswer(ctx.log, call.id, err)
  const clientGone = err instanceof ClientGoneError
  const credits = priceOf({ kind: 'failed', spec, error: err, httpStatus, clientGone, splitCalls })
  if (trail) {
    const error = clientGone ? undefined : err instanceof Error ? err.name : 'Error'
    ctx.trails?.end(trail, { status: httpStatus, credits, partner: false, error, clientGone })
  }
  return {
    payload,
    httpStatus,
    credits,
    method: spec.name,
    isNotification: call.isNotification,
    partner: false,
    errorHeaders: headers,
    trail,
    error: err,
    endedMs: trail ? performance.now() : 0,
  }
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
