import type { Logger } from 'pino'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import { InvalidKeyError, MissingKeyError, TollgateError, UnknownNetworkError } from '../errors/errors.ts'
import { toJsonRpcError } from '../errors/toJsonRpcError.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import { serializeBatch, serializeError } from '../jsonrpc/serialize.ts'
import type { RpcEntry, RpcId, RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { ClientGoneError } from '../upstreams/createUpstreamPool.ts'
import { handleRpc } from './handleRpc.ts'
import type { RpcContext } from './rpcContext.ts'

export type HttpRpcRequest = {
  /** The key from the path; empty when the path had none. */
  key: string
  /** The `/{network}/v3/...` prefix, if the path had one. */
  networkName: string | undefined
  host: string | undefined
  body: string
  cancellation: Cancellation
}

export type HttpRpcResponse = { status: number; body: RpcPayload }

export type HttpRpcDeps = {
  keys: KeyRegistry
  networks: NetworkRegistry
  maxBatchSize: number
  log: Logger
}

/** A JSON-RPC POST: authenticate, pick the network, run every call, assemble the answer. */
export async function handleHttpRpc(deps: HttpRpcDeps, request: HttpRpcRequest): Promise<HttpRpcResponse> {
  let parsed: RpcRequest | undefined
  let parseError: unknown
  try {
    parsed = parseRpcRequest(request.body, { maxBatchSize: deps.maxBatchSize })
  } catch (err) {
    parseError = err
  }
  const requestId = parsed && !parsed.isBatch ? idOf(parsed.entry) : null

  try {
    if (request.key === '') throw new MissingKeyError()
    const apiKey = deps.keys.findActiveKey(request.key)
    if (!apiKey) throw new InvalidKeyError()
    const network = deps.networks.resolve(request.networkName, request.host)
    if (!network) throw new UnknownNetworkError()
    if (parsed === undefined) throw parseError

    const ctx: RpcContext = { network, apiKey, cancellation: request.cancellation, log: deps.log }
    if (!parsed.isBatch) {
      const { payload, httpStatus } = await runEntry(ctx, parsed.entry)
      return { status: httpStatus, body: isNotification(parsed.entry) ? '' : payload }
    }
    const results = await Promise.all(parsed.entries.map((entry) => runEntry(ctx, entry)))
    const payloads = results
      .filter((_, index) => !isNotification(parsed.entries[index] as RpcEntry))
      .map((result) => result.payload)
    return { status: 200, body: payloads.length === 0 ? '' : serializeBatch(payloads) }
  } catch (err) {
    return errorResponse(deps.log, requestId, err)
  }
}

type EntryResult = { payload: RpcPayload; httpStatus: number }

async function runEntry(ctx: RpcContext, entry: RpcEntry): Promise<EntryResult> {
  if ('error' in entry) return errorResponseOf(ctx.log, entry.id, entry.error)
  try {
    return { payload: await handleRpc(ctx, entry.call), httpStatus: 200 }
  } catch (err) {
    return errorResponseOf(ctx.log, entry.call.id, err)
  }
}

function errorResponse(log: Logger, id: RpcId, err: unknown): HttpRpcResponse {
  const { payload, httpStatus } = errorResponseOf(log, id, err)
  return { status: httpStatus, body: payload }
}

function errorResponseOf(log: Logger, id: RpcId, err: unknown): EntryResult {
  const { httpStatus, error } = toJsonRpcError(err)
  if (httpStatus >= 500 && !(err instanceof ClientGoneError)) {
    const details = err instanceof TollgateError ? err.details : undefined
    log.warn(
      { err: err instanceof TollgateError ? undefined : err, details, status: httpStatus },
      error.message,
    )
  }
  return { payload: serializeError(id, error), httpStatus }
}

function isNotification(entry: RpcEntry): boolean {
  return 'call' in entry && entry.call.isNotification
}

function idOf(entry: RpcEntry): RpcId {
  return 'call' in entry ? entry.call.id : entry.id
}
