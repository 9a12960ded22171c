import { isUtf8 } from 'node:buffer'
import type { Logger } from 'pino'
import type { FilterIds } from '../auth/createFilterIds.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { keyRef } from '../auth/keyRef.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import type { Meter } from '../metering/meterTypes.ts'
import type { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import {
  authorizeKeyRequest,
  authorizeUnverified,
  type KeyRequest,
  type KeyRequestDeps,
} from './authorizeKeyRequest.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import type { RequestTrace, RequestTracing } from './RequestTrace.ts'
import { recordingTrails, routeHeaders, wantsRouteHeaders } from './routeHeaders.ts'
import { errorOutcome, type RpcOutcome, runRpcRequest } from './runRpcRequest.ts'

export type HttpRpcRequest = {
  /** Who sends it and where it goes (kept as its own object: spreading it into this one costs µs). */
  keyRequest: KeyRequest
  /**
   * Reads the body: its bytes, or rejects with the transport-level refusal (a TollgateError: 413,
   * 415, a busy server) that kept it from being read, or the stream's own error. Called only once
   * the request is known to be someone's to run.
   */
  readBody(): Promise<Buffer>
  cancellation: Cancellation
  /** What the request's answers may hold; the transport releases it once the answer is sent. */
  answerBudget: AnswerBudget
}

export type HttpRpcResponse = {
  status: number
  body: RpcPayload
  /** Names and values, one after the other (`[name, value, name, value...]`, as Node writes them). */
  headers: string[] | undefined
}

export type HttpRpcDeps = KeyRequestDeps & {
  meter: Meter
  filterIds: FilterIds
  maxBatchSize: number
  maxJsonDepth: number
  log: Logger
  /** Starts each request's trace; undefined when tracing is off (docs/observability.md#traces). */
  tracing: RequestTracing | undefined
}

/**
 * A JSON-RPC POST: the key, what the request proves (secret, JWT), the network, the request-level
 * allowlists, then the body and every call. A request that has not proved what its key requires is
 * answered from its headers alone: its body is never read, it costs nothing and carries no credit
 * headers. A body refused whole (413, 415, parse errors) costs 5 credits. Rejects only with the
 * body stream's own error (the client went away mid-body). With tracing on, the request is a trace
 * that continues the caller's `traceparent` (docs/observability.md#traces).
 */
export function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  if (deps.tracing === undefined) return served(deps, request, undefined)
  const headers = request.keyRequest.headers
  const trace = deps.tracing.startRequest('http', oneOf(headers?.traceparent), oneOf(headers?.tracestate))
  return served(deps, request, trace).then(
    (response) => {
      // the client went away: no one reads the answer, and its going is not a failure
      const gone = request.cancellation.cancelled
      const status = { 'http.response.status_code': response.status }
      trace.finish(
        gone ? { ...status, 'tollgate.client_gone': true } : status,
        !gone && response.status >= 500,
      )
      return response
    },
    (err: unknown) => {
      // the body stream's error: the client went away, which is not a failure
      trace.finish({ 'tollgate.client_gone': true }, false)
      throw err
    },
  )
}

/** The request's answer, its steps' spans on `trace` when it is traced; the route headers when its key asks. */
async function served(
  deps: HttpRpcDeps,
  request: HttpRpcRequest,
  trace: RequestTrace | undefined,
): Promise<HttpRpcResponse> {
  const { keyRequest } = request
  const authenticated = trace?.step('authenticate')
  const access = authorizeUnverified(deps, keyRequest) ?? (await authorizeKeyRequest(deps, keyRequest))
  authenticated?.({ 'tollgate.authorized': access.ok })
  if (!access.ok) {
    // the body is not read, so the call's id is not known
    const { payload, httpStatus, headers } = errorOutcome(deps, null, access.error)
    return { status: httpStatus, body: payload, headers: headers && toHeaderList(headers) }
  }
  const { key, network, guard, failover } = access
  // counted from here to the answer (inline: no await of its own): a network a reload replaced
  // stops once its calls are done
  network.calls.enter()
  try {
    let body: Buffer
    try {
      body = await request.readBody()
    } catch (refusal) {
      // the body stream's own error (the client went away mid-body) is no refusal to answer
      if (!(refusal instanceof TollgateError)) throw refusal
      return response(deps, key, network.name, await refuse(deps, key, network.name, refusal))
    }
    let parsed: RpcRequest
    try {
      parsed = parse(deps, body)
    } catch (refusal) {
      return response(deps, key, network.name, await refuse(deps, key, network.name, refusal))
    }
    const { cancellation, answerBudget } = request
    const { meter, filterIds, log } = deps
    const routed = wantsRouteHeaders(key, keyRequest)
    const trails = trace ?? (routed ? recordingTrails : undefined)
    const ctx = {
      network,
      key,
      guard,
      failover,
      meter,
      filterIds,
      cancellation,
      answerBudget,
      log,
      trails,
      trace,
    }
    const outcome = await runRpcRequest(ctx, parsed)
    trace?.note({
      'tollgate.key': keyRef(key.apiKey.key),
      'tollgate.network': network.name,
      'tollgate.credits': outcome.settlement?.chargedCredits ?? 0,
    })
    const answer = response(deps, key, network.name, outcome)
    if (routed && outcome.trails) answer.headers?.push(...routeHeaders(outcome.trails))
    return answer
  } finally {
    network.calls.leave()
  }
}

/** What an outcome is answered with: its status, body and the credit headers. */
function response(
  deps: HttpRpcDeps,
  key: KeyEntry,
  networkName: string,
  outcome: RpcOutcome,
): HttpRpcResponse {
  if (deps.log.isLevelEnabled('debug')) {
    deps.log.debug(
      {
        key: keyRef(key.apiKey.key),
        network: networkName,
        status: outcome.status,
        charged: outcome.settlement?.chargedCredits ?? 0,
      },
      'rpc request',
    )
  }
  return {
    status: outcome.status,
    body: outcome.body,
    headers: creditHeaders(deps.meter, key, outcome),
  }
}

/**
 * A body refused whole: 5 credits, unless even those cannot be paid (then the 402/429); a body the
 * server was too busy to read (503) costs nothing (chargeRefusal).
 */
async function refuse(deps: HttpRpcDeps, key: KeyEntry, network: string, err: unknown): Promise<RpcOutcome> {
  const { error, settlement } = await chargeRefusal(deps.meter, key.subject, network, err)
  const { payload, httpStatus, headers } = errorOutcome(deps, null, error)
  return { status: httpStatus, body: payload, settlement, partner: false, errorHeaders: headers }
}

/**
 * X-Credits-Charged, X-Credits-Remaining and X-RateLimit-Reset (seconds to 00:00 UTC, when the daily
 * balance resets) on every keyed answer; Retry-After on a 402 or 429 (seconds until the request would
 * be admitted); X-Served-By: partner when a partner provider answered (never which one).
 */
function creditHeaders(meter: Meter, key: KeyEntry, outcome: RpcOutcome): string[] {
  const { settlement } = outcome
  const headers = [
    'x-credits-charged',
    `${settlement?.chargedCredits ?? 0}`,
    'x-credits-remaining',
    `${settlement?.remainingCredits ?? meter.remainingCredits(key.subject)}`,
    'x-ratelimit-reset',
    `${settlement?.resetSeconds ?? meter.secondsToReset()}`,
  ]
  if (outcome.errorHeaders)
    for (const name in outcome.errorHeaders) headers.push(name, outcome.errorHeaders[name] as string)
  if (outcome.partner) headers.push('x-served-by', 'partner')
  return headers
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
function parse(deps: HttpRpcDeps, body: Buffer): RpcRequest {
  // a call forwarded as written goes as these bytes when they are the text they decode to
  return parseRpcRequest(body.toString(), deps, isUtf8(body) ? body : undefined)
}
