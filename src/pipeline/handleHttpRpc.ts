import { isUtf8 } from 'node:buffer'
import type { Logger } from 'pino'
import type { FilterIds } from '../auth/createFilterIds.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { keyRef } from '../auth/keyRef.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import type { Meter } from '../metering/createMeter.ts'
import type { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import {
  authorizeKeyRequest,
  type KeyRequest,
  type KeyRequestAccess,
  type KeyRequestDeps,
} from './authorizeKeyRequest.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import { errorOutcome, type RpcOutcome, runRpcRequest } from './runRpcRequest.ts'

export type HttpRpcRequest = {
  /** Who sends it and where it goes (kept as its own object: spreading it into this one costs µs). */
  keyRequest: KeyRequest
  /**
   * Reads the body: its bytes, or the transport-level refusal (413, 415, a busy server) that kept
   * it from being read. Called only once the request is known to be someone's to run.
   */
  readBody(done: (body: Buffer | TollgateError) => void): void
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
}

/**
 * A JSON-RPC POST: the key, what the request proves (secret, JWT), the network, the request-level
 * allowlists, then the body and every call. A request that has not proved what its key requires is
 * answered from its headers alone: its body is never read, it costs nothing and carries no credit
 * headers. A body refused whole (413, 415, parse errors) costs 5 credits. A request that runs is
 * answered through the pipeline's own promise (runRpcRequest shapes the answer).
 */
export function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  const pending = authorizeKeyRequest(deps, request.keyRequest)
  return pending instanceof Promise
    ? pending.then((access) => answer(deps, request, access))
    : answer(deps, request, pending)
}

/** The request run, or refused as its access says. */
function answer(
  deps: HttpRpcDeps,
  request: HttpRpcRequest,
  access: KeyRequestAccess,
): Promise<HttpRpcResponse> {
  if (!access.ok) {
    // the body is not read, so the call's id is not known
    const { payload, httpStatus, headers } = errorOutcome(deps, null, access.error)
    return Promise.resolve({ status: httpStatus, body: payload, headers: headers && toHeaderList(headers) })
  }
  return new Promise((resolve) => request.readBody((body) => resolve(run(deps, request, access, body))))
}

/** The body's calls run for a request its key admits. */
function run(
  deps: HttpRpcDeps,
  request: HttpRpcRequest,
  { key, network, guard, failover }: KeyRequestAccess & { ok: true },
  body: Buffer | TollgateError,
): Promise<HttpRpcResponse> {
  const respond = (outcome: RpcOutcome) => response(deps, key, network.name, outcome)
  const parsed = parse(deps, body)
  if (!parsed.ok) return refuse(deps, key, network.name, parsed.refusal).then(respond)
  const { cancellation, answerBudget } = request
  const { meter, filterIds, log } = deps
  const ctx = { network, key, guard, failover, meter, filterIds, cancellation, answerBudget, log }
  return runRpcRequest(ctx, parsed.request, respond)
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
 * server was too busy to read (503) costs nothing.
 */
async function refuse(deps: HttpRpcDeps, key: KeyEntry, network: string, err: unknown): Promise<RpcOutcome> {
  const ours = err instanceof TollgateError && err.httpStatus >= 500
  const { error, settlement } = ours
    ? { error: err, settlement: undefined }
    : await chargeRefusal(deps.meter, key.subject, network, err)
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

function toHeaderList(headers: Record<string, string>): string[] {
  const list: string[] = []
  for (const name in headers) list.push(name, headers[name] as string)
  return list
}

/** The body's calls, or what refuses it whole: the transport's refusal (413, 415) or the parser's. */
function parse(
  deps: HttpRpcDeps,
  body: Buffer | TollgateError,
): { ok: true; request: RpcRequest } | { ok: false; refusal: unknown } {
  if (!Buffer.isBuffer(body)) return { ok: false, refusal: body }
  try {
    // a call forwarded as written goes as these bytes when they are the text they decode to
    return {
      ok: true,
      request: parseRpcRequest(body.toString(), deps, isUtf8(body) ? body : undefined),
    }
  } catch (refusal) {
    return { ok: false, refusal }
  }
}
