import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toWireError } from '../errors/toWireError.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcEntry, RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { withRawIds } from '../jsonrpc/withRawIds.ts'
import type { Admission, Settlement, UsageRecord } from '../metering/createMeter.ts'
import { credits } from '../methods/methodTable.ts'
import { ClientGoneError } from '../upstreams/createUpstreamPool.ts'
import { type CallAnswer, handleRpc, PartnerAnswer } from './handleRpc.ts'
import { type PreparedCall, prepareCall } from './prepareCall.ts'
import type { RpcContext } from './rpcContext.ts'

export type RpcOutcome = {
  status: number
  /** Empty when every call was a notification. */
  body: RpcPayload
  /** What the request was charged, and what is left; undefined when refused before any charge. */
  settlement: Settlement | undefined
  /** A partner provider answered at least one of its calls (docs/compatibility.md §7 failover). */
  partner: boolean
  /** The refusal's own headers (a 402's or 429's Retry-After), from the one error mapping. */
  errorHeaders?: Record<string, string> | undefined
}

type CallOutcome = {
  payload: RpcPayload
  httpStatus: number
  usage: UsageRecord | undefined
  isNotification: boolean
  partner?: boolean
  /** A failure's own headers (a busy server's Retry-After): a single call's answer carries them. */
  errorHeaders?: Record<string, string> | undefined
}

/** The label usage is recorded under for a batch's envelope charge. */
const batchEnvelopeLabel = '(batch)'

/**
 * Runs a parsed request for an authenticated key (HTTP and WebSocket alike): prepare every call,
 * admit the most it can cost, run the calls, charge what they really cost (docs/compatibility.md §2).
 * A 402/429 refuses the whole request and costs nothing. `finish` turns the outcome into what the
 * transport answers with, here rather than in a promise of the caller's (one layer less a request).
 */
export function runRpcRequest<T>(
  ctx: RpcContext,
  request: RpcRequest,
  finish: (outcome: RpcOutcome) => T,
): Promise<T> {
  const { rawIds } = request
  // the rare request with ids JSON would alter: their text goes back in place of their stand-ins
  const done =
    rawIds === undefined
      ? finish
      : (outcome: RpcOutcome) => finish({ ...outcome, body: withRawIds(outcome.body, rawIds) })
  return request.isBatch ? runBatch(ctx, request.entries, done) : runSingle(ctx, request.entry, done)
}

/**
 * One call: the batch's steps without its lists (this is nearly every request), the call awaited
 * here without a layer of its own.
 */
async function runSingle<T>(
  ctx: RpcContext,
  entry: RpcEntry,
  finish: (outcome: RpcOutcome) => T,
): Promise<T> {
  const prepared = prepareCall(ctx, entry)
  const admitted = admit(ctx, prepared.costCredits, idOf(prepared))
  const admission = admitted instanceof Promise ? await admitted : admitted
  if ('status' in admission) return finish(admission)
  let outcome: CallOutcome
  if (!prepared.ok) outcome = refusedCall(ctx, prepared)
  else {
    try {
      outcome = answeredCall(ctx, prepared, await handleRpc(ctx, prepared))
    } catch (err) {
      outcome = failedCall(ctx, prepared, err)
    }
  }
  const settlement = ctx.meter.settle(admission, outcome.usage ? [outcome.usage] : [])
  return finish({
    status: outcome.httpStatus,
    body: outcome.isNotification ? '' : outcome.payload,
    settlement,
    partner: outcome.partner === true,
    errorHeaders: outcome.errorHeaders,
  })
}

async function runBatch<T>(
  ctx: RpcContext,
  entries: RpcEntry[],
  finish: (outcome: RpcOutcome) => T,
): Promise<T> {
  const prepared = entries.map((entry) => prepareCall(ctx, entry))
  let estimate = credits.batchEnvelope
  for (const call of prepared) estimate += call.costCredits
  const admitted = admit(ctx, estimate, null)
  const admission = admitted instanceof Promise ? await admitted : admitted
  if ('status' in admission) return finish(admission)

  const outcomes = await Promise.all(prepared.map((call) => runCall(ctx, call)))
  const usage: UsageRecord[] = []
  for (const outcome of outcomes) if (outcome.usage) usage.push(outcome.usage)
  // the envelope is paid for by a batch whose calls did work: a batch refused whole (too large, or
  // nothing but refused calls) costs what refused input costs
  if (prepared.some((call) => call.ok) && usage.some((record) => record.credits > 0)) {
    usage.push({ method: batchEnvelopeLabel, network: ctx.network.name, credits: credits.batchEnvelope })
  }
  const settlement = ctx.meter.settle(admission, usage)
  const partner = outcomes.some((outcome) => outcome.partner)
  const payloads = outcomes.filter((outcome) => !outcome.isNotification).map((outcome) => outcome.payload)
  return finish({
    status: 200,
    body: payloads.length === 0 ? '' : serializeBatch(payloads),
    settlement,
    partner,
  })
}

/**
 * Holds the most a request can cost, or answers its refusal (402/429, with `id`). An in-process
 * balance admits at once: no promise to wait for.
 */
function admit(
  ctx: RpcContext,
  estimate: number,
  id: RpcId,
): Admission | RpcOutcome | Promise<Admission | RpcOutcome> {
  let admitted: Admission | Promise<Admission>
  try {
    admitted = ctx.meter.admit(ctx.key.subject, estimate)
  } catch (err) {
    return refusal(ctx, id, err)
  }
  return admitted instanceof Promise ? admitted.catch((err: unknown) => refusal(ctx, id, err)) : admitted
}

function refusal(ctx: RpcContext, id: RpcId, err: unknown): RpcOutcome {
  const { payload, httpStatus, headers } = errorOutcome(ctx, id, err)
  return { status: httpStatus, body: payload, settlement: undefined, partner: false, errorHeaders: headers }
}

async function runCall(ctx: RpcContext, prepared: PreparedCall): Promise<CallOutcome> {
  if (!prepared.ok) return refusedCall(ctx, prepared)
  try {
    return answeredCall(ctx, prepared, await handleRpc(ctx, prepared))
  } catch (err) {
    return failedCall(ctx, prepared, err)
  }
}

/** A call refused before it ran: what refused input costs, and its error. */
function refusedCall(ctx: RpcContext, prepared: PreparedCall & { ok: false }): CallOutcome {
  const { payload, httpStatus } = errorOutcome(ctx, prepared.id, prepared.error)
  const usage = { method: prepared.method, network: ctx.network.name, credits: prepared.costCredits }
  return { payload, httpStatus, usage, isNotification: prepared.isNotification }
}

function answeredCall(
  ctx: RpcContext,
  prepared: PreparedCall & { ok: true },
  answer: CallAnswer,
): CallOutcome {
  const { call, spec } = prepared
  const usage: UsageRecord = { method: spec.name, network: ctx.network.name, credits: spec.costCredits }
  const partner = answer instanceof PartnerAnswer
  if (partner) usage.failover = true
  const payload = partner ? answer.payload : answer
  return { payload, httpStatus: 200, usage, isNotification: call.isNotification, partner }
}

function failedCall(ctx: RpcContext, prepared: PreparedCall & { ok: true }, err: unknown): CallOutcome {
  const { call, spec } = prepared
  const { payload, httpStatus, headers } = errorOutcome(ctx, call.id, err)
  // failures on our side or upstream (5xx), and calls whose client went away, cost nothing; params
  // refused before any node was asked (an eth_getLogs range over the limit) cost what refused input costs
  const free = httpStatus >= 500 || err instanceof ClientGoneError
  const charged = free ? 0 : err instanceof InvalidParamsError ? credits.refusedInput : spec.costCredits
  const usage = { method: spec.name, network: ctx.network.name, credits: charged }
  return { payload, httpStatus, usage, isNotification: call.isNotification, errorHeaders: headers }
}

export function errorOutcome(ctx: Pick<RpcContext, 'log'>, id: RpcId, err: unknown) {
  const { httpStatus, body, error, headers } = toWireError(err, 'jsonrpc', id)
  if (httpStatus >= 500 && !(err instanceof ClientGoneError)) {
    const logDetails = err instanceof TollgateError ? err.logDetails : undefined
    ctx.log.warn(
      { err: err instanceof TollgateError ? undefined : err, logDetails, status: httpStatus },
      error.message,
    )
  }
  return { payload: JSON.stringify(body), httpStatus, headers }
}

function idOf(call: PreparedCall): RpcId {
  return call.ok ? call.call.id : call.id
}
