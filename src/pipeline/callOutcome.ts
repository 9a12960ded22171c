import { performance } from 'node:perf_hooks'
import { ClientGoneError } from '../errors/callEndings.ts'
import { type CallAnswer, PartnerAnswer, payloadOf } from '../jsonrpc/PartnerAnswer.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import { priceOf } from '../methods/priceOf.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { answerCall } from './answerCall.ts'
import { CallCharge } from './CallCharge.ts'
import { errorAnswer } from './errorAnswer.ts'
import type { PreparedCall } from './prepareCall.ts'
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
 * One call's outcome: refused before it ran (its error, at once), answered, or failed; its trail kept
 * and ended when the request keeps trails (the route header, a trace).
 */
export function callOutcome(ctx: RpcContext, prepared: PreparedCall): CallOutcome | Promise<CallOutcome> {
  if (!prepared.ok) return refused(ctx, prepared)
  const trail = ctx.trails?.start(prepared.spec.name, ctx.network.name)
  // a split eth_getLogs' node calls, each chunk held as it goes
  const charge = new CallCharge(ctx.credits, prepared.spec.costCredits)
  return answerCall(ctx, prepared, trail, charge).then(
    (answer) => answered(ctx, prepared, answer, trail, charge),
    (err: unknown) => failed(ctx, prepared, err, trail, charge),
  )
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
