import type { Logger } from 'pino'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { keyRef } from '../auth/keyRef.ts'
import type { TollgateError } from '../errors/errors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcEntry, RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import type { Meter } from '../metering/createMeter.ts'
import { authorizeKeyRequest, type KeyRequest, type KeyRequestDeps } from './authorizeKeyRequest.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import { errorOutcome, type RpcOutcome, runRpcRequest } from './runRpcRequest.ts'

export type HttpRpcRequest = KeyRequest & {
  /** The body, or the transport-level refusal (413, 415) that kept it from being read. */
  body: string | TollgateError
  cancellation: Cancellation
}

export type HttpRpcResponse = {
  status: number
  body: RpcPayload
  headers: Record<string, string> | undefined
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
 */
export async function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  let parsed: RpcRequest | undefined
  let refusal: unknown = request.body
  if (typeof request.body === 'string') {
    try {
      parsed = parseRpcRequest(request.body, {
        maxBatchSize: deps.maxBatchSize,
        maxJsonDepth: deps.maxJsonDepth,
      })
    } catch (err) {
      refusal = err
    }
  }
  const requestId = parsed && !parsed.isBatch ? idOf(parsed.entry) : null

  const access = await authorizeKeyRequest(deps, request)
  if (!access.ok && !access.key) return unpaid(deps, requestId, access.error)
  const key = access.key as KeyEntry
  let outcome: RpcOutcome
  if (!access.ok) outcome = await refuse(deps, key, access.networkName, requestId, access.error)
  else if (parsed === undefined) outcome = await refuse(deps, key, access.network.name, requestId, refusal)
  else {
    const { network, guard, failover } = access
    const { cancellation } = request
    const ctx = { network, key, guard, failover, meter: deps.meter, cancellation, log: deps.log }
    outcome = await runRpcRequest(ctx, parsed)
  }
  if (deps.log.isLevelEnabled('debug')) {
    deps.log.debug(
      {
        key: keyRef(key.apiKey.key),
        network: access.ok ? access.network.name : access.networkName,
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
  return { status: httpStatus, body: payload, headers }
}

/**
 * X-Credits-Charged, X-Credits-Remaining and X-RateLimit-Reset (seconds to 00:00 UTC, when the daily
 * balance resets) on every keyed answer; Retry-After on a 402 or 429 (seconds until the request would
 * be admitted); X-Served-By: partner when a partner provider answered (never which one).
 */
function creditHeaders(meter: Meter, key: KeyEntry, outcome: RpcOutcome): Record<string, string> {
  const { settlement } = outcome
  const headers: Record<string, string> = {
    'x-credits-charged': String(settlement?.chargedCredits ?? 0),
    'x-credits-remaining': String(settlement?.remainingCredits ?? meter.remainingCredits(key.subject)),
    'x-ratelimit-reset': String(settlement?.resetSeconds ?? meter.secondsToReset()),
  }
  if (outcome.errorHeaders) Object.assign(headers, outcome.errorHeaders)
  if (outcome.partner) headers['x-served-by'] = 'partner'
  return headers
}

function idOf(entry: RpcEntry): RpcId {
  return 'call' in entry ? entry.call.id : entry.id
}
