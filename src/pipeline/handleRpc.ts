import { isUtf8 } from 'node:buffer'
import type { Logger } from 'pino'
import type { FilterIds } from '../auth/createFilterIds.ts'
import { keyRef } from '../auth/keyRef.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { withRawIds } from '../jsonrpc/withRawIds.ts'
import type { Admission, Meter, Settlement, UsageRecord } from '../metering/meterTypes.ts'
import { priceOf } from '../methods/priceOf.ts'
import type { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import {
  authorizeKeyRequest,
  type KeyRequest,
  type KeyRequestAccess,
  type KeyRequestDeps,
} from './authorizeKeyRequest.ts'
import { type CallOutcome, callOutcome } from './callOutcome.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import { creditHeaders } from './creditHeaders.ts'
import { errorAnswer } from './errorAnswer.ts'
import { type PreparedCall, prepareCall } from './prepareCall.ts'
import type { RequestTrace, RequestTracing } from './RequestTrace.ts'
import { recordingTrails, routeHeaders, wantsRouteHeaders } from './routeHeaders.ts'
import type { RpcContext, SubscriptionHandler } from './rpcContext.ts'

export type RpcDeps = KeyRequestDeps & {
  meter: Meter
  filterIds: FilterIds
  maxBatchSize: number
  maxJsonDepth: number
  log: Logger
  /** Starts each request's trace; undefined when tracing is off (docs/observability.md#traces). */
  tracing: RequestTracing | undefined
}

/** A JSON-RPC request as a transport hands it over: an HTTP POST, or one WebSocket message. */
export type RpcArrival = {
  transport: 'http' | 'ws'
  /** Who sends it and where it goes. */
  keyRequest: KeyRequest
  /**
   * A WebSocket's own access: the key as it stands now, for the network the socket was opened on
   * (createSocketAccess). Undefined for an HTTP request, which is authorized here.
   */
  access?: (() => Promise<KeyRequestAccess>) | undefined
  /**
   * The body: a WebSocket message's text, or (HTTP) what reads it: its bytes, or rejects with the
   * transport-level refusal (a TollgateError: 413, 415, a busy server) that kept it from being read,
   * or the stream's own error. Read only once the request is known to be someone's to run.
   */
  body: string | (() => Promise<Buffer>)
  cancellation: Cancellation
  /** What the request's answers may hold; the transport releases it once the answer is sent. */
  answerBudget: AnswerBudget
  /** A WebSocket's: eth_subscribe and eth_unsubscribe are answered by it. */
  subscriptions?: SubscriptionHandler | undefined
}

/** The request's answer: its HTTP status, body (empty when every call was a notification) and headers. */
export type RpcAnswer = {
  status: number
  body: RpcPayload
  /** Names and values, one after the other (`[name, value, name, value...]`, as Node writes them). */
  headers: string[]
}

/** The label usage is recorded under for a batch's envelope charge. */
const batchEnvelopeLabel = '(batch)'

/**
 * The request path, for HTTP requests and WebSocket messages alike, step by step: authenticate and
 * authorize (the key, what the request proves, where it goes; a request that has not proved what its
 * key requires is answered from its headers alone: its body is never read, it costs nothing and
 * carries no credit headers); parse (a body refused whole costs 5 credits); validate each call and
 * hold the most the request can cost (a 402/429 refuses it whole, for nothing); answer each call
 * (callOutcome: here, from the cache, the upstreams or a split range); settle, each call charged the
 * price of its outcome (priceOf, docs/compatibility.md §2); record (the credit headers, the trace,
 * the route headers). Rejects only with the body stream's own error (the client went away
 * mid-body).
 */
export async function handleRpc(deps: RpcDeps, arrival: RpcArrival): Promise<RpcAnswer> {
  const trace = deps.tracing && startTrace(deps.tracing, arrival)
  const authenticated = trace?.step('authenticate')
  const access = await (arrival.access?.() ?? authorizeKeyRequest(deps, arrival.keyRequest))
  authenticated?.({ 'tollgate.authorized': access.ok })
  if (!access.ok) {
    // the body is not read, so the call's id is not known
    const { payload, httpStatus, headers } = errorAnswer(deps.log, null, access.error)
    return finished(trace, arrival, { status: httpStatus, body: payload, headers: toHeaderList(headers) })
  }
  const { key, network, guard, failover } = access
  // counted from here to the answer: a network a reload replaced stops once its calls are done
  network.calls.enter()
  try {
    let request: RpcRequest
    try {
      request = parse(deps, typeof arrival.body === 'string' ? arrival.body : await arrival.body())
    } catch (refusal) {
      // the body stream's own error (the client went away mid-body) is no refusal to answer
      if (!(refusal instanceof TollgateError)) {
        trace?.finish({ 'tollgate.client_gone': true }, false)
        throw refusal
      }
      const charged = await chargeRefusal(deps.meter, key.subject, network.name, refusal)
      const { payload, httpStatus, headers } = errorAnswer(deps.log, null, charged.error)
      return settled(deps, trace, arrival, access, {
        status: httpStatus,
        body: payload,
        settlement: charged.settlement,
        errorHeaders: headers,
      })
    }
    const routed = arrival.transport === 'http' && wantsRouteHeaders(key, arrival.keyRequest)
    const ctx: RpcContext = {
      network,
      key,
      guard,
      failover,
      meter: deps.meter,
      filterIds: deps.filterIds,
      cancellation: arrival.cancellation,
      answerBudget: arrival.answerBudget,
      log: deps.log,
      trails: trace ?? (routed ? recordingTrails : undefined),
      trace,
      subscriptions: arrival.subscriptions,
    }

    // validate each call (method, params, allowlists), then hold the most the request can cost
    const calls = request.isBatch
      ? request.entries.map((entry) => prepareCall(ctx, entry))
      : [prepareCall(ctx, request.entry)]
    const metered = trace?.step('meter')
    const heldCredits = mostCostOf(calls, request.isBatch)
    let admission: Admission
    try {
      admission = await deps.meter.admit(key.subject, heldCredits)
    } catch (limit) {
      // refused whole by the balance or the rate: it costs nothing
      const { payload, httpStatus, headers } = errorAnswer(
        deps.log,
        request.isBatch ? null : idOf(calls[0]),
        limit,
      )
      metered?.({ 'tollgate.refused': httpStatus })
      return settled(deps, trace, arrival, access, {
        status: httpStatus,
        body: payload,
        settlement: undefined,
        errorHeaders: headers,
      })
    }
    metered?.({ 'tollgate.credits_held': heldCredits })

    const outcomes = request.isBatch
      ? await Promise.all(calls.map((call) => callOutcome(ctx, call)))
      : [await callOutcome(ctx, calls[0] as PreparedCall)]

    const usage = outcomes.map((outcome) => usageOf(outcome, network.name))
    if (request.isBatch) usage.push(envelopeUsage(calls, usage, network.name))
    const settlement = deps.meter.settle(admission, usage)

    const answer = request.isBatch
      ? batchAnswer(outcomes, settlement)
      : singleAnswer(outcomes[0] as CallOutcome, settlement)
    const { rawIds } = request
    // the rare request with ids JSON would alter: their text goes back in place of their stand-ins
    if (rawIds !== undefined) answer.body = withRawIds(answer.body, rawIds)
    return settled(deps, trace, arrival, access, answer, routed ? outcomes : undefined)
  } finally {
    network.calls.leave()
  }
}

/** What the request path makes of a request of a proven key before it is recorded. */
type Settled = {
  status: number
  body: RpcPayload
  /** What the request was charged, and what is left; undefined when refused before any charge. */
  settlement: Settlement | undefined
  /** The refusal's or a single call's failure's own headers (a Retry-After), from the one error mapping. */
  errorHeaders: Record<string, string> | undefined
  /** A partner provider answered at least one of its calls (docs/compatibility.md §7 failover). */
  partner?: boolean
}

/** The most a request can cost: each call served (no outcome of a call costs more), a batch's envelope. */
function mostCostOf(calls: PreparedCall[], isBatch: boolean): number {
  let credits = isBatch ? priceOf({ kind: 'batchEnvelope', callsRan: true, callsCharged: true }) : 0
  for (const call of calls)
    credits += priceOf(call.ok ? { kind: 'served', spec: call.spec } : { kind: 'refusedCall' })
  return credits
}

function usageOf(outcome: CallOutcome, network: string): UsageRecord {
  const usage: UsageRecord = { method: outcome.method, network, credits: outcome.credits }
  if (outcome.partner) usage.failover = true
  return usage
}

/** A batch's envelope: paid by a batch some of whose calls ran and cost credits (priceOf). */
function envelopeUsage(calls: PreparedCall[], usage: UsageRecord[], network: string): UsageRecord {
  const credits = priceOf({
    kind: 'batchEnvelope',
    callsRan: calls.some((call) => call.ok),
    callsCharged: usage.some((record) => record.credits > 0),
  })
  return { method: batchEnvelopeLabel, network, credits }
}

/** One call (nearly every request): answered without a batch's envelope, with its own status. */
function singleAnswer(outcome: CallOutcome, settlement: Settlement): Settled {
  return {
    status: outcome.httpStatus,
    body: outcome.isNotification ? '' : outcome.payload,
    settlement,
    errorHeaders: outcome.errorHeaders,
    partner: outcome.partner,
  }
}

function batchAnswer(outcomes: CallOutcome[], settlement: Settlement): Settled {
  const payloads = outcomes.filter((outcome) => !outcome.isNotification).map((outcome) => outcome.payload)
  return {
    status: 200,
    body: payloads.length === 0 ? '' : serializeBatch(payloads),
    settlement,
    errorHeaders: undefined,
    partner: outcomes.some((outcome) => outcome.partner),
  }
}

/**
 * Records the answer to a proven key: the credit headers (what was charged, what is left and when
 * the balance resets: written once, here), a refusal's Retry-After, X-Served-By: partner when a
 * partner provider answered (never which one), the route headers when the key asks for them
 * (`outcomes`); the trace's last notes.
 */
function settled(
  deps: RpcDeps,
  trace: RequestTrace | undefined,
  arrival: RpcArrival,
  { key, network }: KeyRequestAccess & { ok: true },
  answer: Settled,
  outcomes?: CallOutcome[],
): RpcAnswer {
  const charged = answer.settlement?.chargedCredits ?? 0
  if (deps.log.isLevelEnabled('debug')) {
    const ref = keyRef(key.apiKey.key)
    deps.log.debug({ key: ref, network: network.name, status: answer.status, charged }, 'rpc request')
  }
  trace?.note({
    'tollgate.key': keyRef(key.apiKey.key),
    'tollgate.network': network.name,
    'tollgate.credits': charged,
  })
  const headers = creditHeaders(deps.meter, key.subject, answer.settlement)
  if (answer.errorHeaders)
    for (const name in answer.errorHeaders) headers.push(name, answer.errorHeaders[name] as string)
  if (answer.partner) headers.push('x-served-by', 'partner')
  if (outcomes) headers.push(...routeHeaders(outcomes.map((outcome) => outcome.trail)))
  return finished(trace, arrival, { status: answer.status, body: answer.body, headers })
}

/** The request's trace ends with its answer (a client gone first is no failure). */
function finished(trace: RequestTrace | undefined, arrival: RpcArrival, answer: RpcAnswer): RpcAnswer {
  if (!trace) return answer
  if (arrival.transport === 'ws') {
    trace.finish({}, answer.status >= 500)
    return answer
  }
  const gone = arrival.cancellation.cancelled
  const status = { 'http.response.status_code': answer.status }
  trace.finish(gone ? { ...status, 'tollgate.client_gone': true } : status, !gone && answer.status >= 500)
  return answer
}

/** A request's trace: an HTTP request continues the caller's W3C trace context when it sends one. */
function startTrace(tracing: RequestTracing, arrival: RpcArrival): RequestTrace {
  if (arrival.transport === 'ws') return tracing.startRequest('ws', undefined, undefined)
  const headers = arrival.keyRequest.headers
  return tracing.startRequest('http', oneOf(headers?.traceparent), oneOf(headers?.tracestate))
}

/** A header's value; the first when it came more than once. */
function oneOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function toHeaderList(headers: Record<string, string>): string[] {
  const list: string[] = []
  for (const name in headers) list.push(name, headers[name] as string)
  return list
}

/** The body's calls, or throws the parser's refusal of the body whole. */
function parse(deps: RpcDeps, body: Buffer | string): RpcRequest {
  if (typeof body === 'string') return parseRpcRequest(body, deps)
  // a call forwarded as written goes as these bytes when they are the text they decode to
  return parseRpcRequest(body.toString(), deps, isUtf8(body) ? body : undefined)
}

function idOf(call: PreparedCall | undefined) {
  if (!call) return null
  return call.ok ? call.call.id : call.id
}
