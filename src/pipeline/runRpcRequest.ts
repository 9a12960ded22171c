import { ClientGoneError } from '../errors/callEndings.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toWireError } from '../errors/toWireError.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcEntry, RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { withRawIds } from '../jsonrpc/withRawIds.ts'
import type { Admission, Settlement, UsageRecord } from '../metering/meterTypes.ts'
import { priceOf } from '../methods/priceOf.ts'
import type { CallTrail } from '../upstreams/CallTrail.ts'
import { type CallAnswer, handleRpc, PartnerAnswer } from './handleRpc.ts'
import { type PreparedCall, prepareCall } from './prepareCall.ts'
import type { SpanAttributes } from './RequestTrace.ts'
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
  /** Each call's trail, in call order (undefined for a call refused before it ran), when ctx.trails. */
  trails?: (CallTrail | undefined)[] | undefined
}

type CallOutcome = {
  payload: RpcPayload
  httpStatus: number
  usage: UsageRecord
  isNotification: boolean
  partner: boolean
  /** A failure's own headers (a busy server's Retry-After): a single call's answer carries them. */
  errorHeaders?: Record<string, string> | undefined
  trail?: CallTrail | undefined
}

/** The label usage is recorded under for a batch's envelope charge. */
const batchEnvelopeLabel = '(batch)'

/**
 * Runs a parsed request for an authenticated key (HTTP and WebSocket alike): prepare every call,
 * admit the most it can cost, run the calls, charge what they really cost (priceOf,
 * docs/compatibility.md §2). A 402/429 refuses the whole request and costs nothing.
 */
export function runRpcRequest(ctx: RpcContext, request: RpcRequest): Promise<RpcOutcome> {
  const outcome = request.isBatch ? runBatch(ctx, request.entries) : runSingle(ctx, request.entry)
  const { rawIds } = request
  // the rare request with ids JSON would alter: their text goes back in place of their stand-ins
  if (rawIds === undefined) return outcome
  return outcome.then((ran) => ({ ...ran, body: withRawIds(ran.body, rawIds) }))
}

/** One call (nearly every request): admitted at its own price, answered without a batch's envelope. */
async function runSingle(ctx: RpcContext, entry: RpcEntry): Promise<RpcOutcome> {
  const prepared = prepareCall(ctx, entry)
  const { meter, key } = ctx
  let admission: Admission
  const metered = ctx.trace?.step('meter')
  try {
    // the most it can cost held: by this process nearly always, else once the bank has said
    admission =
      meter.admitNow(key.subject, prepared.costCredits) ??
      (await meter.askBank(key.subject, prepared.costCredits))
  } catch (err) {
    return refusal(ctx, idOf(prepared), err, metered)
  }
  metered?.({ 'tollgate.credits_held': prepared.costCredits })
  const outcome = await runCall(ctx, prepared)
  const settlement = ctx.meter.settle(admission, [outcome.usage])
  return {
    status: outcome.httpStatus,
    body: outcome.isNotification ? '' : outcome.payload,
    settlement,
    partner: outcome.partner,
    errorHeaders: outcome.errorHeaders,
    trails: ctx.trails && [outcome.trail],
  }
}

async function runBatch(ctx: RpcContext, entries: RpcEntry[]): Promise<RpcOutcome> {
  const prepared = entries.map((entry) => prepareCall(ctx, entry))
  // the most the envelope can cost: a batch whose calls ran and were charged
  let estimate = priceOf({ kind: 'batchEnvelope', callsRan: true, callsCharged: true })
  for (const call of prepared) estimate += call.costCredits
  const { meter, key } = ctx
  let admission: Admission
  const metered = ctx.trace?.step('meter')
  try {
    admission = meter.admitNow(key.subject, estimate) ?? (await meter.askBank(key.subject, estimate))
  } catch (err) {
    return refusal(ctx, null, err, metered)
  }
  metered?.({ 'tollgate.credits_held': estimate })

  const outcomes = await Promise.all(prepared.map((call) => runCall(ctx, call)))
  const usage = outcomes.map((outcome) => outcome.usage)
  const envelopeCredits = priceOf({
    kind: 'batchEnvelope',
    callsRan: prepared.some((call) => call.ok),
    callsCharged: usage.some((record) => record.credits > 0),
  })
  if (envelopeCredits > 0) {
    usage.push({ method: batchEnvelopeLabel, network: ctx.network.name, credits: envelopeCredits })
  }
  const settlement = ctx.meter.settle(admission, usage)
  const partner = outcomes.some((outcome) => outcome.partner)
  const payloads = outcomes.filter((outcome) => !outcome.isNotification).map((outcome) => outcome.payload)
  return {
    status: 200,
    body: payloads.length === 0 ? '' : serializeBatch(payloads),
    settlement,
    partner,
    trails: ctx.trails && outcomes.map((outcome) => outcome.trail),
  }
}

/** A request the meter refused (402/429, with `id`): it costs nothing (its `meter` span says so, when traced). */
function refusal(
  ctx: RpcContext,
  id: RpcId,
  err: unknown,
  metered: ((attributes: SpanAttributes) => void) | undefined,
): RpcOutcome {
  const { payload, httpStatus, headers } = errorOutcome(ctx, id, err)
  metered?.({ 'tollgate.refused': httpStatus })
  return { status: httpStatus, body: payload, settlement: undefined, partner: false, errorHeaders: headers }
}

/** One call of a request, refused, answered or failed, with what it costs. */
async function runCall(ctx: RpcContext, prepared: PreparedCall): Promise<CallOutcome> {
  if (!prepared.ok) return refusedCall(ctx, prepared)
  if (ctx.trails) return trailedCall(ctx, ctx.trails, prepared)
  try {
    return answeredCall(ctx, prepared, await handleRpc(ctx, prepared, undefined))
  } catch (err) {
    return failedCall(ctx, prepared, err)
  }
}

/** A call whose trail someone reads (the route header, a trace): its outcome carries it. */
async function trailedCall(
  ctx: RpcContext,
  trails: NonNullable<RpcContext['trails']>,
  prepared: PreparedCall & { ok: true },
): Promise<CallOutcome> {
  const trail = trails.start(prepared.spec.name, ctx.network.name)
  let outcome: CallOutcome
  let error: string | undefined
  let clientGone = false
  try {
    outcome = answeredCall(ctx, prepared, await handleRpc(ctx, prepared, trail))
  } catch (err) {
    outcome = failedCall(ctx, prepared, err)
    clientGone = err instanceof ClientGoneError
    if (!clientGone) error = err instanceof Error ? err.name : 'Error'
  }
  const { httpStatus: status, usage, partner } = outcome
  trails.end(trail, { status, credits: usage.credits, partner, error, clientGone })
  outcome.trail = trail
  return outcome
}

/** A call refused before it ran: what refused input costs, and its error. */
function refusedCall(ctx: RpcContext, prepared: PreparedCall & { ok: false }): CallOutcome {
  const { payload, httpStatus } = errorOutcome(ctx, prepared.id, prepared.error)
  const usage = { method: prepared.method, network: ctx.network.name, credits: prepared.costCredits }
  return { payload, httpStatus, usage, isNotification: prepared.isNotification, partner: false }
}

function answeredCall(
  ctx: RpcContext,
  prepared: PreparedCall & { ok: true },
  answer: CallAnswer,
): CallOutcome {
  const { call, spec } = prepared
  const credits = priceOf({ kind: 'served', spec })
  const usage: UsageRecord = { method: spec.name, network: ctx.network.name, credits }
  const partner = answer instanceof PartnerAnswer
  if (partner) usage.failover = true
  const payload = partner ? answer.payload : answer
  return { payload, httpStatus: 200, usage, isNotification: call.isNotification, partner }
}

function failedCall(ctx: RpcContext, prepared: PreparedCall & { ok: true }, err: unknown): CallOutcome {
  const { call, spec } = prepared
  const { payload, httpStatus, headers } = errorOutcome(ctx, call.id, err)
  const clientGone = err instanceof ClientGoneError
  const credits = priceOf({ kind: 'failed', spec, error: err, httpStatus, clientGone })
  const usage = { method: spec.name, network: ctx.network.name, credits }
  return {
    payload,
    httpStatus,
    usage,
    isNotification: call.isNotification,
    partner: false,
    errorHeaders: headers,
  }
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
