import { isUtf8 } from 'node:buffer'
import type { Logger } from 'pino'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { keyRef } from '../auth/keyRef.ts'
import type { TollgateError } from '../errors/errors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { withRawIds } from '../jsonrpc/withRawIds.ts'
import type { Meter } from '../metering/createMeter.ts'
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
  /** The body's bytes, or the transport-level refusal (413, 415) that kept it from being read. */
  body: Buffer | TollgateError
  cancellation: Cancellation
}

export type HttpRpcResponse = {
  status: number
  body: RpcPayload
  /** Names and values, one after the other (`[name, value, name, value...]`, as Node writes them). */
  headers: string[] | undefined
}

export type HttpRpcDeps = KeyRequestDeps & {
  meter: Meter
  maxBatchSize: number
  maxJsonDepth: number
  log: Logger
}

/**
 * A JSON-RPC POST: the key, what the request proves (secret, JWT), the network, the request-level
 * allowlists, then every call. Whole-request refusals cost 5 credits, except 401s (nobody to charge).
 * A request that runs is answered through the pipeline's own promise (runRpcRequest shapes the
 * answer): no layer of its own.
 */
export function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  // the key first: the body is parsed once the request is known to be someone's to run, and only
  // for the id of the error otherwise
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
  if (!access.ok && !access.key) {
    const { id, rawIds } = requestIdOf(deps, request.body)
    const refusal = unpaid(deps, id, access.error)
    return Promise.resolve(rawIds ? { ...refusal, body: withRawIds(refusal.body, rawIds) } : refusal)
  }
  const key = access.key as KeyEntry
  const networkName = access.ok ? access.network.name : access.networkName
  const respond = (outcome: RpcOutcome) => response(deps, key, networkName, outcome)
  if (!access.ok) {
    const { id, rawIds } = requestIdOf(deps, request.body)
    return refuse(deps, key, networkName, id, access.error).then((outcome) =>
      respond(rawIds ? { ...outcome, body: withRawIds(outcome.body, rawIds) } : outcome),
    )
  }
  const parsed = parse(deps, request.body)
  if (!parsed.ok) return refuse(deps, key, networkName, null, parsed.refusal).then(respond)
  const { network, guard, failover } = access
  const { cancellation } = request
  const ctx = { network, key, guard, failover, meter: deps.meter, cancellation, log: deps.log }
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

/** A refusal of the whole request: 5 credits, unless even those cannot be paid (then the 402/429). */
async function refuse(
  deps: HttpRpcDeps,
  key: KeyEntry,
  network: string,
  id: RpcId,
  err: unknown,
): Promise<RpcOutcome> {
  const { error, settlement } = await chargeRefusal(deps.meter, key.subject, network, err)
  const { payload, httpStatus, headers } = errorOutcome(deps, id, error)
  return { status: httpStatus, body: payload, settlement, partner: false, errorHeaders: headers }
}

/** A refusal nobody is charged for (401, or the 429 of too many failed authentications). */
function unpaid(deps: HttpRpcDeps, id: RpcId, err: unknown): HttpRpcResponse {
  const { payload, httpStatus, headers } = errorOutcome(deps, id, err)
  return { status: httpStatus, body: payload, headers: headers && appendHeaders([], headers) }
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
  if (outcome.errorHeaders) appendHeaders(headers, outcome.errorHeaders)
  if (outcome.partner) headers.push('x-served-by', 'partner')
  return headers
}

function appendHeaders(list: string[], headers: Record<string, string>): string[] {
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

/**
 * The id a whole-request refusal answers with: a single call's, when the body can be read (with the
 * text of an id JSON would alter, to be written back in place of its stand-in).
 */
function requestIdOf(
  deps: HttpRpcDeps,
  body: Buffer | TollgateError,
): { id: RpcId; rawIds: string[] | undefined } {
  const parsed = parse(deps, body)
  if (!parsed.ok || parsed.request.isBatch) return { id: null, rawIds: undefined }
  const { entry, rawIds } = parsed.request
  return { id: 'call' in entry ? entry.call.id : entry.id, rawIds }
}
