import type { Logger } from 'pino'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { parseBasicAuth } from '../auth/parseBasicAuth.ts'
import { MissingGasApiKeyError } from '../errors/authErrors.ts'
import {
  FeeHistoryLoadingError,
  NoBaseFeeError,
  UnknownGasEndpointError,
  UnsupportedChainIdError,
} from '../errors/gasErrors.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toHeaderList } from '../errors/toHeaderList.ts'
import { toWireError } from '../errors/toWireError.ts'
import type { Meter, Settlement } from '../metering/meterTypes.ts'
import { priceOf } from '../methods/priceOf.ts'
import { authorizeKeyRequest, type KeyRequest, type KeyRequestDeps } from '../pipeline/authorizeKeyRequest.ts'
import { chargeRefusal } from '../pipeline/chargeRefusal.ts'
import { creditHeaders } from '../pipeline/creditHeaders.ts'
import { baseFeeHistory, baseFeePercentile, suggestedGasFees } from './computeGasFees.ts'
import type { FeeIndexer, FeeWindow } from './createFeeIndexer.ts'
import { formatGwei } from './formatGwei.ts'

export type GasRequest = {
  /** From `/v3/{KEY}/networks/...`; otherwise the key is the HTTP Basic user name. */
  pathKey: string | undefined
  chainId: string
  endpoint: string
  authorization: string | undefined
  /** The socket's remote address: failed authentications are counted per client address. */
  clientAddress: string | undefined
  origin: string | undefined
  userAgent: string | undefined
}

export type GasResponse = {
  status: number
  body: unknown
  /** Names and values, one after the other (`[name, value, name, value...]`, as Node writes them). */
  headers: string[]
}

export type GasDeps = KeyRequestDeps & {
  meter: Meter
  indexers: ReadonlyMap<number, FeeIndexer>
  historyBlocks: number
  log: Logger
}

type Endpoint = (window: FeeWindow, historyBlocks: number) => unknown

const endpoints: Record<string, Endpoint> = {
  baseFeePercentile: (window) => ({ baseFeePercentile: formatGwei(baseFeePercentile(window.blocks, 0.5)) }),
  busyThreshold: (window) => ({ busyThreshold: formatGwei(baseFeePercentile(window.blocks, 0.9)) }),
  baseFeeHistory: (window, historyBlocks) => baseFeeHistory(window.blocks, historyBlocks),
  suggestedGasFees: (window) => suggestedGasFees(window),
}

/** Answers computed once per window (a new head), so requests do no arithmetic over 20,000 blocks. */
const answers = new WeakMap<FeeWindow, Map<string, unknown>>()

/**
 * The Gas REST API (docs/compatibility.md §5): HTTP Basic `KEY:SECRET` or the key in the path, checked
 * as every keyed request is (authorizeKeyRequest, with the chain id's network), 80 credits from the
 * balance (priceOf, beside the method table), answers from the indexer's stored window only. Errors are
 * `{"statusCode", "message"}` (plus `event` and `details` for 402 and 429).
 */
export async function handleGasRequest(deps: GasDeps, request: GasRequest): Promise<GasResponse> {
  const basic = parseBasicAuth(request.authorization)
  const keyValue = request.pathKey ?? basic?.user ?? ''
  if (keyValue === '') return fail(new MissingGasApiKeyError())
  const compute = endpoints[request.endpoint]
  const indexer = /^\d+$/.test(request.chainId) ? deps.indexers.get(Number(request.chainId)) : undefined
  const access = await authorizeKeyRequest(deps, keyRequest(keyValue, request), {
    network: indexer?.network,
    refusal: !compute
      ? new UnknownGasEndpointError(request.endpoint)
      : !indexer
        ? new UnsupportedChainIdError(request.chainId)
        : undefined,
  })
  // a request that has not proved what its key requires costs nothing and shows nothing of the key
  if (!access.ok) return fail(access.error)
  const { key, network } = access
  const ready = indexer as FeeIndexer
  try {
    if (ready.status() === 'no-base-fee') throw new NoBaseFeeError(ready.chainId)
    const window = ready.window()
    if (!window) throw new FeeHistoryLoadingError(ready.chainId)

    // computed (once per window) before credits are held: a computation that throws holds none
    let cached = answers.get(window)
    if (!cached) {
      cached = new Map()
      answers.set(window, cached)
    }
    let body = cached.get(request.endpoint)
    if (body === undefined) {
      body = (compute as Endpoint)(window, deps.historyBlocks)
      cached.set(request.endpoint, body)
    }
    const costCredits = priceOf({ kind: 'gasApi' })
    const admission = await deps.meter.admit(key.subject, costCredits)
    const settlement = deps.meter.settle(admission, [
      { method: `gas:${request.endpoint}`, network: network.name, credits: costCredits },
    ])
    return { status: 200, body, headers: creditHeaders(deps.meter, key.subject, settlement) }
  } catch (err) {
    // refused input costs 5 credits; 402/429 and our own failures cost nothing (chargeRefusal)
    const { error, settlement } = await chargeRefusal(deps.meter, key.subject, network.name, err)
    if (!(err instanceof TollgateError) || err.httpStatus >= 500) {
      deps.log.warn({ err }, 'gas API request failed')
    }
    return refused(deps, key, error, settlement)
  }
}

/** What authorizeKeyRequest reads of a Gas API request: its key and credentials, no path network. */
function keyRequest(key: string, request: GasRequest): KeyRequest {
  return {
    key,
    // the chain id names the network (the target given to authorizeKeyRequest)
    networkName: undefined,
    host: undefined,
    authorization: request.authorization,
    clientAddress: request.clientAddress,
    // a Gas API answer is small, and no body is read
    shares: [],
    origin: request.origin,
    userAgent: request.userAgent,
    enableFailover: undefined,
    headers: undefined,
  }
}

/** A refusal for a known key: the credit headers, and a 402's or 429's Retry-After. */
function refused(
  deps: GasDeps,
  key: KeyEntry,
  err: unknown,
  settlement: Settlement | undefined,
): GasResponse {
  const failed = fail(err)
  return { ...failed, headers: [...creditHeaders(deps.meter, key.subject, settlement), ...failed.headers] }
}

function fail(err: unknown): GasResponse {
  const { httpStatus, body, headers } = toWireError(err, 'gas')
  return { status: httpStatus, body, headers: toHeaderList(headers) }
}
