import { ClientGoneError } from '../errors/callEndings.ts'
import { PartnerAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import { priceOf } from '../methods/priceOf.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { answerCall } from './answerCall.ts'
import { errorAnswer } from './errorAnswer.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { RpcContext } from './rpcContext.ts'

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
  errorHeaders: Record<string, string> | undefined
  /** What it did on its way (upstream attempts, the cache), when the request keeps trails. */
  trail: CallTrail | undefined
}

/**
 * One call's outcome: refused before it ran (its error), answered, or failed; its trail kept and
 * ended when the request keeps trails (the route header, a trace).
 */
export async function callOutcome(ctx: RpcContext, prepared: PreparedCall): Promise<CallOutcome> {
  if (!prepared.ok) {
    const { payload, httpStatus } = errorAnswer(ctx.log, prepared.id, prepared.error)
    const { method, isNotification } = prepared
    const credits = priceOf({ kind: 'refusedCall' })
    return {
      payload,
      httpStatus,
      credits,
      method,
      isNotification,
      partner: false,
      errorHeaders: undefined,
      trail: undefined,
    }
  }
  const { call, spec } = prepared
  const trail = ctx.trails?.start(spec.name, ctx.network.name)
  let outcome: CallOutcome
  let failure: { error: unknown } | undefined
  try {
    const answer = await answerCall(ctx, prepared, trail)
    const partner = answer instanceof PartnerAnswer
    outcome = {
      payload: partner ? answer.payload : answer,
      httpStatus: 200,
      credits: priceOf({ kind: 'served', spec }),
      method: spec.name,
      isNotification: call.isNotification,
      partner,
      errorHeaders: undefined,
      trail,
    }
  } catch (err) {
    const { payload, httpStatus, headers } = errorAnswer(ctx.log, call.id, err)
    const clientGone = err instanceof ClientGoneError
    failure = { error: err }
    outcome = {
      payload,
      httpStatus,
      credits: priceOf({ kind: 'failed', spec, error: err, httpStatus, clientGone }),
      method: spec.name,
      isNotification: call.isNotification,
      partner: false,
      errorHeaders: headers,
      trail,
    }
  }
  if (trail) {
    // the trail's reader (a trace's call span) hears how the call ended
    const err = failure?.error
    const clientGone = err instanceof ClientGoneError
    const error = failure && !clientGone ? (err instanceof Error ? err.name : 'Error') : undefined
    const { httpStatus: status, credits, partner } = outcome
    ctx.trails?.end(trail, { status, credits, partner, error, clientGone })
  }
  return outcome
}
