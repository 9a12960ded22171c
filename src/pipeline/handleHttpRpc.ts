import type { Logger } from 'pino'
import { type AuthenticateDeps, type Authentication, authenticate } from '../auth/authenticate.ts'
import { authorizeRequest } from '../auth/authorize.ts'
import type { KeyEntry, KeyRegistry } from '../auth/createKeyRegistry.ts'
import { keyRef } from '../auth/keyRef.ts'
import { InvalidKeyError, MissingKeyError, TollgateError, UnknownNetworkError } from '../errors/errors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcEntry, RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import type { Meter } from '../metering/createMeter.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import { errorOutcome, type RpcOutcome, runRpcRequest } from './runRpcRequest.ts'

export type HttpRpcRequest = {
  /** The key from the path; empty when the path had none. */
  key: string
  /** The `/{network}/v3/...` prefix, if the path had one. */
  networkName: string | undefined
  host: string | undefined
  /** The body, or the transport-level refusal (413, 415) that kept it from being read. */
  body: string | TollgateError
  authorization: string | undefined
  origin: string | undefined
  userAgent: string | undefined
  cancellation: Cancellation
}

export type HttpRpcResponse = {
  status: number
  body: RpcPayload
  headers: Record<string, string> | undefined
}

export type HttpRpcDeps = AuthenticateDeps & {
  keys: KeyRegistry
  networks: NetworkRegistry
  meter: Meter
  maxBatchSize: number
  log: Logger
}

/** What a request without an Authorization header proves. */
const anonymous: Authentication = { secretVerified: false, claims: undefined }

/**
 * A JSON-RPC POST: the key, what the request proves (secret, JWT), the network, the request-level
 * allowlists, then every call. Whole-request refusals cost 5 credits, except 401s (nobody to charge).
 */
export async function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  let parsed: RpcRequest | undefined
  let refusal: unknown = request.body
  if (typeof request.body === 'string') {
    try {
      parsed = parseRpcRequest(request.body, { maxBatchSize: deps.maxBatchSize })
    } catch (err) {
      refusal = err
    }
  }
  const requestId = parsed && !parsed.isBatch ? idOf(parsed.entry) : null

  if (request.key === '') return unpaid(deps, requestId, new MissingKeyError())
  const key = deps.keys.findActiveKey(request.key)
  if (!key) return unpaid(deps, requestId, new InvalidKeyError())
  const network = deps.networks.resolve(request.networkName, request.host)

  let outcome: RpcOutcome
  try {
    const auth =
      request.authorization === undefined && !key.access.requireSecret && !key.access.jwt.required
        ? anonymous
        : await authenticate(key, request.authorization, deps)
    if (!network) throw new UnknownNetworkError()
    const guard = authorizeRequest(key, auth, {
      networkName: network.name,
      origin: request.origin,
      userAgent: request.userAgent,
    })
    if (parsed === undefined) throw refusal
    const ctx = { network, key, guard, meter: deps.meter, cancellation: request.cancellation, log: deps.log }
    outcome = await runRpcRequest(ctx, parsed)
  } catch (err) {
    if (err instanceof TollgateError && err.httpStatus === 401) return unpaid(deps, requestId, err)
    outcome = refuse(deps, key, network?.name ?? '(unknown)', requestId, err)
  }
  if (deps.log.isLevelEnabled('debug')) {
    deps.log.debug(
      {
        key: keyRef(key.apiKey.key),
        network: network?.name,
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
function refuse(deps: HttpRpcDeps, key: KeyEntry, network: string, id: RpcId, err: unknown): RpcOutcome {
  const { error, settlement } = chargeRefusal(deps.meter, key.subject, network, err)
  const { payload, httpStatus } = errorOutcome(deps, id, error)
  return { status: httpStatus, body: payload, settlement }
}

function unpaid(deps: HttpRpcDeps, id: RpcId, err: unknown): HttpRpcResponse {
  const { payload, httpStatus } = errorOutcome(deps, id, err)
  return { status: httpStatus, body: payload, headers: undefined }
}

/** X-Credits-Charged, X-Credits-Remaining and X-RateLimit-Reset (seconds to 00:00 UTC) on every keyed answer. */
function creditHeaders(meter: Meter, key: KeyEntry, outcome: RpcOutcome): Record<string, string> {
  const { settlement } = outcome
  return {
    'x-credits-charged': String(settlement?.chargedCredits ?? 0),
    'x-credits-remaining': String(settlement?.remainingCredits ?? meter.remainingCredits(key.subject)),
    'x-ratelimit-reset': String(settlement?.resetSeconds ?? meter.secondsToReset()),
  }
}

function idOf(entry: RpcEntry): RpcId {
  return 'call' in entry ? entry.call.id : entry.id
}
