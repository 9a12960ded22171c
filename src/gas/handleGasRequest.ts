import type { Logger } from 'pino'
import { type AuthenticateDeps, authenticate } from '../auth/authenticate.ts'
import { authorizeRequest } from '../auth/authorize.ts'
import type { KeyEntry, KeyRegistry } from '../auth/createKeyRegistry.ts'
import { parseBasicAuth } from '../auth/parseBasicAuth.ts'
import {
  FeeHistoryLoadingError,
  InvalidKeyError,
  MissingGasApiKeyError,
  NoBaseFeeError,
  TollgateError,
  UnknownGasEndpointError,
  UnsupportedChainIdError,
} from '../errors/errors.ts'
import { toWireError } from '../errors/toWireError.ts'
import type { Meter } from '../metering/createMeter.ts'
import { credits } from '../methods/methodTable.ts'
import { chargeRefusal } from '../pipeline/chargeRefusal.ts'
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

export type GasResponse = { status: number; body: unknown; headers: Record<string, string> | undefined }

export type GasDeps = AuthenticateDeps & {
  keys: KeyRegistry
  meter: Meter
  indexers: ReadonlyMap<number, FeeIndexer>
  historyBlocks: number
  log: Logger
}

const endpoints: Record<string, (window: FeeWindow, historyBlocks: number) => unknown> = {
  baseFeePercentile: (window) => ({ baseFeePercentile: formatGwei(baseFeePercentile(window.blocks, 0.5)) }),
  busyThreshold: (window) => ({ busyThreshold: formatGwei(baseFeePercentile(window.blocks, 0.9)) }),
  baseFeeHistory: (window, historyBlocks) => baseFeeHistory(window.blocks, historyBlocks),
  suggestedGasFees: (window) => suggestedGasFees(window),
}

/** Answers computed once per window (a new head), so requests do no arithmetic over 20,000 blocks. */
const answers = new WeakMap<FeeWindow, Map<string, unknown>>()

/**
 * The Gas REST API (docs/compatibility.md §5): HTTP Basic `KEY:SECRET` or the key in the path, the key's network
 * and origin rules, 80 credits from the balance, answers from the indexer's stored window only.
 * Errors are `{"statusCode", "message"}` (plus `event` and `details` for 402 and 429).
 */
export async function handleGasRequest(deps: GasDeps, request: GasRequest): Promise<GasResponse> {
  const basic = parseBasicAuth(request.authorization)
  const keyValue = request.pathKey ?? basic?.user ?? ''
  if (keyValue === '') return fail(new MissingGasApiKeyError())
  const key = deps.keys.findActiveKey(keyValue)
  if (!key) return fail(new InvalidKeyError())

  let charged = 0
  try {
    const auth = await authenticate(key, request, deps)
    const compute = endpoints[request.endpoint]
    if (!compute) throw new UnknownGasEndpointError(request.endpoint)
    const indexer = /^\d+$/.test(request.chainId) ? deps.indexers.get(Number(request.chainId)) : undefined
    if (!indexer) throw new UnsupportedChainIdError(request.chainId)
    authorizeRequest(key, auth, {
      networkName: indexer.network.name,
      origin: request.origin,
      userAgent: request.userAgent,
    })
    if (indexer.status() === 'no-base-fee') throw new NoBaseFeeError(indexer.chainId)
    const window = indexer.window()
    if (!window) throw new FeeHistoryLoadingError(indexer.chainId)

    const admission = await deps.meter.admit(key.subject, credits.gasEndpoint)
    let cached = answers.get(window)
    if (!cached) {
      cached = new Map()
      answers.set(window, cached)
    }
    let body = cached.get(request.endpoint)
    if (body === undefined) {
      body = compute(window, deps.historyBlocks)
      cached.set(request.endpoint, body)
    }
    const settlement = deps.meter.settle(admission, [
      { method: `gas:${request.endpoint}`, network: indexer.network.name, credits: credits.gasEndpoint },
    ])
    charged = settlement.chargedCredits
    return { status: 200, body, headers: headers(deps, key, charged) }
  } catch (err) {
    const status = err instanceof TollgateError ? err.httpStatus : 500
    // refused input costs 5 credits; 401s, 402/429 and our own failures cost nothing
    let answer = err
    if (status >= 400 && status < 500 && status !== 401 && status !== 402 && status !== 429) {
      const network =
        (/^\d+$/.test(request.chainId) && deps.indexers.get(Number(request.chainId))?.network.name) || '(gas)'
      const { error, settlement } = await chargeRefusal(deps.meter, key.subject, network, err)
      answer = error
      charged = settlement?.chargedCredits ?? 0
    }
    if (status >= 500) deps.log.warn({ err }, 'gas API request failed')
    const failed = fail(answer)
    // a 402 or 429 says when the call would be admitted (its retry-after)
    return { ...failed, headers: { ...headers(deps, key, charged), ...failed.headers } }
  }
}

function fail(err: unknown): GasResponse {
  const { httpStatus, body, headers } = toWireError(err, 'gas')
  return { status: httpStatus, body, headers }
}

function headers(deps: GasDeps, key: KeyEntry, charged: number): Record<string, string> {
  return {
    'x-credits-charged': String(charged),
    'x-credits-remaining': String(deps.meter.remainingCredits(key.subject)),
    'x-ratelimit-reset': String(deps.meter.secondsToReset()),
  }
}
