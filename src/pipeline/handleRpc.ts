import { type Buffer, isUtf8 } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { Account } from '../auth/apiKey.ts'
import type { FilterIds } from '../auth/createFilterIds.ts'
import { keyRef } from '../auth/keyRef.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { withRawIds } from '../jsonrpc/withRawIds.ts'
import type { CallsInFlight } from '../metering/CallsInFlight.ts'
import type { Meter, Settlement, UsageRecord } from '../metering/meterTypes.ts'
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
import { RequestCredits } from './RequestCredits.ts'
import type { RequestTrace, RequestTracing } from './RequestTrace.ts'
import { type RequestLogTap, wholeRequestLabel } from './requestLogTap.ts'
import { recordingTrails, routeHeaders, wantsRouteHeaders } from './routeHeaders.ts'
import type { RpcContext, SubscriptionHandler } from './rpcContext.ts'

export type RpcDeps = KeyRequestDeps & {
  meter: Meter
  filterIds: FilterIds
  /** Each key's calls in flight at the upstreams (process-wide), and a plan's bound on them. */
  callsInFlight: CallsInFlight
  maxCallsInFlight: (plan: Account['plan']) => number
  maxBatchSize: number
  maxJsonDepth: number
  log: Logger
  /** Starts each request's trace; undefined when tracing is off (docs/observability.md#traces). */
  tracing: RequestTracing | undefined
  /** Where each call's outcome goes (docs/accounts.md "Request log"); undefined when the log is off. */
  requestLog: RequestLogTap | undefined
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
 * carries no credit headers); parse (a body refused whole costs 5 credits); validate each call;
 * price and admit (the most the request can cost is held; a 402/429 refuses it whole, for nothing;
 * a split eth_getLogs holds each further chunk as it goes: CallCharge);
 * answer each call (callOutcome: here, from the cache, the upstreams or a split range); settle (each
 * call charged the price of its outcome, decided once); record (the credit headers, the route
 * headers, the trace). Rejects only with the body stream's own error (the client went away
 * mid-body).
 */
export async function handleRpc(deps: RpcDeps, arrival: RpcArrival): Promise<RpcAnswer> {
  const trace = deps.tracing && startTrace(deps.tracing, arrival)
  const { requestLog } = deps
  const startedMs = requestLog ? performance.now() : 0
  try {
    // authenticate and authorize (awaited only when it is a promise, as each step below: most
    // requests have nothing to wait for here, and an await is a turn of the microtask queue)
    const authorizing = authorized(deps, arrival, trace)
    const access = authorizing instanceof Promise ? await authorizing : authorizing
    if (!access.ok) {
      // a key's refusals are its account's to read; a stranger's (no key) are nobody's
      if (requestLog && access.key) {
        const { networkName, host } = arrival.keyRequest
        const network = deps.networks.resolve(networkName, host)?.name ?? networkName ?? ''
        const logged = { key: access.key, network, keyRequest: arrival.keyRequest, startedMs }
        requestLog.refusedAtTheDoor(logged, access.error)
      }
      return finished(trace, arrival, refusedAnswer(deps, null, access.error))
    }
    const { key, network } = access
    const logged = requestLog && { key, network: network.name, keyRequest: arrival.keyRequest, startedMs }
    // counted from here to the answer: a network a reload replaced stops once its calls are done
    network.calls.enter()
    try {
      // parse
      let request: RpcRequest
      try {
        request = parse(deps, typeof arrival.body === 'string' ? arrival.body : await arrival.body())
      } catch (refusal) {
        // the body stream's own error (the client went away mid-body) is no refusal to answer
        if (!(refusal instanceof TollgateError)) throw refusal
        const charged = await chargeRefusal(deps.meter, key.subject, network.name, refusal)
        if (logged) {
          const credits = charged.settlement?.chargedCredits ?? 0
          requestLog?.refused(logged, wholeRequestLabel, charged.error, credits)
        }
        const refused = refusedAnswer(deps, null, charged.error)
        return recorded(deps, trace, arrival, access, refused, charged.settlement)
      }
      // validate each call: method, params, allowlists
      const routed = arrival.transport === 'http' && wantsRouteHeaders(key, arrival.keyRequest)
      const ctx = contextOf(deps, arrival, access, trace, routed)
      const calls = request.isBatch
        ? request.entries.map((entry) => prepareCall(ctx, entry))
        : [prepareCall(ctx, request.entry)]

      // price and admit: the most the request can cost is held
      const metered = trace?.step('meter')
      const heldCredits = mostCostOf(calls, request.isBatch)
      try {
        const admitting = deps.meter.admit(key.subject, heldCredits)
        ctx.credits.keep(admitting instanceof Promise ? await admitting : admitting)
      } catch (limit) {
        const refused = refusedAnswer(deps, request.isBatch ? null : idOf(calls[0]), limit)
        if (logged)
          requestLog?.refused(logged, request.isBatch ? batchEnvelopeLabel : labelOf(calls[0]), limit, 0)
        metered?.({ 'tollgate.refused': refused.status })
        return recorded(deps, trace, arrival, access, refused, undefined, request.rawIds)
      }
      metered?.({ 'tollgate.credits_held': heldCredits })

      // answer each call (one alone awaited as it is: a Promise.all of one costs two promises more)
      const outcomes = request.isBatch
        ? await Promise.all(calls.map((call) => callOutcome(ctx, call)))
        : [await callOutcome(ctx, calls[0] as PreparedCall)]

      // settle: each call charged the price of its outcome (against all the request held)
      const settlement = ctx.credits.settle(usageOf(calls, outcomes, request.isBatch, network.name))
      if (logged) requestLog?.calls(logged, calls, outcomes)

      // record
      const result = request.isBatch ? batchResult(outcomes) : singleResult(outcomes[0] as CallOutcome)
      if (routed) result.routes = routeHeaders(outcomes.map((outcome) => outcome.trail))
      return recorded(deps, trace, arrival, access, result, settlement, request.rawIds)
    } finally {
      network.calls.leave()
    }
  } catch (err) {
    // an HTTP request's only rejection is its body stream's: the client went away, which is no failure
    if (arrival.transport === 'http') trace?.finish({ 'tollgate.client_gone': true }, false)
    else trace?.finish({}, true)
    throw err
  }
}

/**
 * Who sends the request and where it goes: an HTTP request's key, credentials and network
 * (authorizeKeyRequest), a WebSocket message's the socket's own access (its `authenticate` step was
 * the upgrade's).
 */
function authorized(
  deps: RpcDeps,
  arrival: RpcArrival,
  trace: RequestTrace | undefined,
): KeyRequestAccess | Promise<KeyRequestAccess> {
  if (arrival.access) return arrival.access()
  const authenticated = trace?.step('authenticate')
  const access = authorizeKeyRequest(deps, arrival.keyRequest)
  if (!authenticated) return access
  return Promise.resolve(access).then((decided) => {
    authenticated({ 'tollgate.authorized': decided.ok })
    return decided
  })
}

/** The body's calls, or throws the parser's refusal of the body whole. */
function parse(deps: RpcDeps, body: Buffer | string): RpcRequest {
  if (typeof body === 'string') return parseRpcRequest(body, deps)
  // a call forwarded as written goes as these bytes when they are the text they decode to
  return parseRpcRequest(body.toString(), deps, isUtf8(body) ? body : undefined)
}

function contextOf(
  deps: RpcDeps,
  arrival: RpcArrival,
  { key, network, guard, failover }: KeyRequestAccess & { ok: true },
  trace: RequestTrace | undefined,
  routed: boolean,
): RpcContext {
  return {
    network,
    key,
    guard,
    failover,
    meter: deps.meter,
    credits: new RequestCredits(deps.meter, key.subject),
    filterIds: deps.filterIds,
    callsInFlight: deps.callsInFlight,
    maxCallsInFlight: deps.maxCallsInFlight(key.apiKey.account.plan),
    cancellation: arrival.cancellation,
    answerBudget: arrival.answerBudget,
    log: deps.log,
    // each call's trail, when something reads them (the trace, the route headers)
    // (the request log reads each call's upstream and cache)
    trails: trace ?? (routed || deps.requestLog ? recordingTrails : undefined),
    trace,
    subscriptions: arrival.subscriptions,
  }
}

/** The most a request can cost: each call served (no outcome of a call costs more), a batch's envelope. */
function mostCostOf(calls: PreparedCall[], isBatch: boolean): number {
  let credits = isBatch ? priceOf({ kind: 'batchEnvelope', callsRan: true, callsCharged: true }) : 0
  for (const call of calls)
    credits += priceOf(
      call.ok ? { kind: 'served', spec: call.spec } : { kind: 'refusedCall', reason: call.reason },
    )
  return credits
}

/**
 * What the request is charged: each call's outcome as priced, and a batch's envelope (paid by a
 * batch some of whose calls ran and cost credits: priceOf).
 */
function usageOf(
  calls: PreparedCall[],
  outcomes: CallOutcome[],
  isBatch: boolean,
  network: string,
): UsageRecord[] {
  const usage = outcomes.map((outcome): UsageRecord => {
    const record: UsageRecord = { method: outcome.method, network, credits: outcome.credits }
    if (outcome.partner) record.failover = true
    return record
  })
  if (!isBatch) return usage
  const envelopeCredits = priceOf({
    kind: 'batchEnvelope',
    callsRan: calls.some((call) => call.ok),
    callsCharged: usage.some((record) => record.credits > 0),
  })
  if (envelopeCredits > 0) usage.push({ method: batchEnvelopeLabel, network, credits: envelopeCredits })
  return usage
}

/** What a request of a proven key comes to, before it is recorded. */
type RequestResult = {
  status: number
  body: RpcPayload
  /** The refusal's or a single call's failure's own headers (a Retry-After), from the one error mapping. */
  errorHeaders: string[] | undefined
  /** A partner provider answered at least one of its calls (docs/compatibility.md §7 failover). */
  partner: boolean
  /** The route headers, when the key asks for them (routeHeaders). */
  routes: string[] | undefined
}

/** One call (nearly every request): answered without a batch's envelope, with its own status. */
function singleResult(outcome: CallOutcome): RequestResult {
  return {
    status: outcome.httpStatus,
    body: outcome.isNotification ? '' : outcome.payload,
    errorHeaders: outcome.errorHeaders,
    partner: outcome.partner,
    routes: undefined,
  }
}

function batchResult(outcomes: CallOutcome[]): RequestResult {
  const payloads = outcomes.filter((outcome) => !outcome.isNotification).map((outcome) => outcome.payload)
  return {
    status: 200,
    body: payloads.length === 0 ? '' : serializeBatch(payloads),
    errorHeaders: undefined,
    partner: outcomes.some((outcome) => outcome.partner),
    routes: undefined,
  }
}

/** A request or call refused with `err` (toWireError's status, body and headers). */
function refusedAnswer(deps: RpcDeps, id: RpcId, err: unknown): RpcAnswer & RequestResult {
  const { payload, httpStatus, headers } = errorAnswer(deps.log, id, err)
  return {
    status: httpStatus,
    body: payload,
    headers,
    errorHeaders: headers,
    partner: false,
    routes: undefined,
  }
}

/**
 * Records the answer to a proven key: the ids the client wrote back in place (`rawIds`), the credit
 * headers (what was charged, what is left and when the balance resets, from `settlement`: written
 * once, here), a refusal's Retry-After, X-Served-By: partner when a partner provider answered (never
 * which one), the route headers; the trace's last notes.
 */
function recorded(
  deps: RpcDeps,
  trace: RequestTrace | undefined,
  arrival: RpcArrival,
  { key, network }: KeyRequestAccess & { ok: true },
  result: RequestResult,
  settlement: Settlement | undefined,
  rawIds?: string[],
): RpcAnswer {
  const charged = settlement?.chargedCredits ?? 0
  if (deps.log.isLevelEnabled('debug')) {
    const ref = keyRef(key.apiKey.key)
    deps.log.debug({ key: ref, network: network.name, status: result.status, charged }, 'rpc request')
  }
  trace?.note({
    'tollgate.key': keyRef(key.apiKey.key),
    'tollgate.network': network.name,
    'tollgate.credits': charged,
  })
  const headers = creditHeaders(deps.meter, key.subject, settlement)
  if (result.errorHeaders) headers.push(...result.errorHeaders)
  if (result.partner) headers.push('x-served-by', 'partner')
  if (result.routes) headers.push(...result.routes)
  // the rare request with ids JSON would alter: their text goes back in place of their stand-ins
  const body = rawIds === undefined ? result.body : withRawIds(result.body, rawIds)
  return finished(trace, arrival, { status: result.status, body, headers })
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

/** The method a call is logged under (prepareCall's label for one that is not ours). */
function labelOf(call: PreparedCall | undefined): string {
  if (!call) return wholeRequestLabel
  return call.ok ? call.spec.name : call.method
}

function idOf(call: PreparedCall | undefined): RpcId {
  if (!call) return null
  return call.ok ? call.call.id : call.id
}
