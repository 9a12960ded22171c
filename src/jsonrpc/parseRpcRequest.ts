import { InvalidRequestError, ParseError } from '../errors/errors.ts'
import { isJsonDeeperThan } from './isJsonDeeperThan.ts'
import type { RpcEntry, RpcId, RpcRequest } from './types.ts'

export type ParseRpcRequestOptions = {
  maxBatchSize: number
  /** Arrays and objects nested inside one another, the envelope's own included. */
  maxJsonDepth: number
}

/**
 * Turns a request body into calls. Throws for what stops the whole request (nested deeper than
 * `maxJsonDepth`, checked before parsing; body not JSON; empty batch); an element that is not a
 * JSON-RPC call becomes an entry carrying its error, so the rest of a batch still runs. A batch over
 * the limit answers as one error element.
 */
export function parseRpcRequest(
  body: string,
  { maxBatchSize, maxJsonDepth }: ParseRpcRequestOptions,
): RpcRequest {
  if (isJsonDeeperThan(body, maxJsonDepth)) {
    throw new InvalidRequestError(`invalid request: JSON nested deeper than ${maxJsonDepth} levels`)
  }
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch (cause) {
    throw new ParseError({ cause })
  }
  if (!Array.isArray(value)) return { isBatch: false, entry: toRpcEntry(value) }
  if (value.length === 0) throw new InvalidRequestError('empty batch')
  if (value.length > maxBatchSize) {
    return { isBatch: true, entries: [{ id: null, error: new InvalidRequestError('batch too large') }] }
  }
  return { isBatch: true, entries: value.map(toRpcEntry) }
}

function toRpcEntry(value: unknown): RpcEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { id: null, error: new InvalidRequestError() }
  }
  const message = value as Record<string, unknown>
  const hasId = 'id' in message
  const id = message.id
  if (hasId && !isRpcId(id)) return { id: null, error: new InvalidRequestError() }
  const validId = hasId ? (id as RpcId) : null
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string' || message.method === '') {
    return { id: validId, error: new InvalidRequestError() }
  }
  const params = message.params ?? []
  if (!Array.isArray(params)) return { id: validId, error: new InvalidRequestError() }
  return { call: { id: validId, method: message.method, params, isNotification: !hasId } }
}

function isRpcId(value: unknown): value is RpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}
