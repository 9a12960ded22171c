import type { Buffer } from 'node:buffer'
import { InvalidRequestError, ParseError } from '../errors/rpcErrors.ts'
import { isJsonDeeperThan } from './isJsonDeeperThan.ts'
import { readCallText } from './readCallText.ts'
import { readIdTexts } from './readIdTexts.ts'
import { type CallMembers, readStringified } from './readStringified.ts'
import type { RpcCall, RpcEntry, RpcId, RpcRequest } from './types.ts'
import { toRawIdStandIn } from './withRawIds.ts'

export type ParseRpcRequestOptions = {
  maxBatchSize: number
  /** Arrays and objects nested inside one another, the envelope's own included. */
  maxJsonDepth: number
}

/**
 * Turns a request body into calls. Throws for what stops the whole request (nested deeper than
 * `maxJsonDepth`, checked before parsing; body not JSON; empty batch); an element that is not a
 * JSON-RPC call becomes an entry carrying its error, so the rest of a batch still runs. A batch over
 * the limit answers as one error element. A single call with an id keeps its text, whether
 * readStringified read it (else its envelope as JSON.parse made it) and, when given, the `bytes` it
 * came in (the caller vouches that they decode to `body` byte for character), to be forwarded as
 * the client wrote it if asWrittenBody finds that any node reads it as JSON.parse did (read when
 * the call is about to be forwarded: one answered from the cache never needs it).
 */
export function parseRpcRequest(
  body: string,
  { maxBatchSize, maxJsonDepth }: ParseRpcRequestOptions,
  bytes?: Buffer,
): RpcRequest {
  // most bodies are written as JSON.stringify writes them: read in one pass, depth included
  const read = readStringified(body, maxJsonDepth)
  const value = read ?? parsed(body, maxJsonDepth)
  if (!Array.isArray(value)) {
    const entry = toRpcEntry(read === undefined ? envelopeOf(value) : (value as CallMembers))
    if ('call' in entry && !entry.call.isNotification) {
      const { call } = entry
      call.text = body
      call.bytes = bytes
      call.stringified = read !== undefined
      if (read === undefined) call.envelope = value as object
    }
    const request: RpcRequest = { isBatch: false, entry }
    // text JSON.stringify writes holds no number it would write otherwise
    return read !== undefined || !hasAlteredId(idOf(entry)) ? request : withStandIns(request, [entry], body)
  }
  if (value.length === 0) throw new InvalidRequestError('empty batch')
  if (value.length > maxBatchSize) {
    return { isBatch: true, entries: [{ id: null, error: new InvalidRequestError('batch too large') }] }
  }
  const entries =
    read === undefined
      ? value.map((element) => toRpcEntry(envelopeOf(element)))
      : (value as CallMembers[]).map(toRpcEntry)
  const request: RpcRequest = { isBatch: true, entries }
  return read !== undefined || !entries.some((entry) => hasAlteredId(idOf(entry)))
    ? request
    : withStandIns(request, entries, body)
}

/** A body readStringified did not read: JSON.parse's value, once its depth is known to be bounded. */
function parsed(body: string, maxJsonDepth: number): unknown {
  if (isJsonDeeperThan(body, maxJsonDepth)) {
    throw new InvalidRequestError(`invalid request: JSON nested deeper than ${maxJsonDepth} levels`)
  }
  try {
    return JSON.parse(body)
  } catch (cause) {
    throw new ParseError({ cause })
  }
}

/** A parsed element's envelope members, as readStringified gives them; undefined when it is no object. */
function envelopeOf(value: unknown): CallMembers | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const message = value as Record<string, unknown>
  return {
    jsonrpc: message.jsonrpc,
    id: message.id,
    hasId: 'id' in message,
    method: message.method,
    params: message.params,
    plain: isPlainEnvelope(message),
  }
}

const idOf = (entry: RpcEntry): RpcId => ('call' in entry ? entry.call.id : entry.id)

/** A number id JSON.stringify may not write as the client did: past 2^53, a fraction, or -0. */
function hasAlteredId(id: RpcId): boolean {
  return typeof id === 'number' && (!Number.isSafeInteger(id) || Object.is(id, -0))
}

/**
 * The rare request with such an id: each is replaced by a stand-in string id (what the pipeline,
 * the node and the answer carry) and its text kept, written back into the answer (withRawIds).
 */
function withStandIns(request: RpcRequest, entries: RpcEntry[], body: string): RpcRequest {
  const texts = readIdTexts(body)
  const rawIds: string[] = []
  entries.forEach((entry, index) => {
    const text = texts.get(index)
    if (text === undefined || !hasAlteredId(idOf(entry))) return
    const standIn = toRawIdStandIn(rawIds.length)
    rawIds.push(text)
    if ('call' in entry) {
      entry.call.id = standIn
      // sent to the node with the stand-in, not as written
      entry.call.text = undefined
      entry.call.bytes = undefined
    } else entry.id = standIn
  })
  if (rawIds.length > 0) request.rawIds = rawIds
  return request
}

function toRpcEntry(envelope: CallMembers | undefined): RpcEntry {
  if (envelope === undefined) return { id: null, error: new InvalidRequestError() }
  const { jsonrpc, id, hasId, method } = envelope
  if (hasId && !isRpcId(id)) return { id: null, error: new InvalidRequestError() }
  const validId = hasId ? (id as RpcId) : null
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method === '') {
    return { id: validId, error: new InvalidRequestError() }
  }
  const params = envelope.params ?? []
  if (!Array.isArray(params)) return { id: validId, error: new InvalidRequestError() }
  const call = {
    id: validId,
    method,
    params,
    isNotification: !hasId,
    text: undefined,
    bytes: undefined,
    stringified: false,
    envelope: undefined,
    plainEnvelope: envelope.plain,
    readsAsWritten: undefined,
  }
  return { call }
}

function isRpcId(value: unknown): value is RpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

/**
 * The call as its client wrote it (its bytes, else its text), when a node reading that gets what
 * JSON.parse got; undefined when it must be written anew. Read only for a call about to be
 * forwarded: one answered from the cache never needs it.
 */
export function asWrittenBody(call: RpcCall): string | Buffer | undefined {
  if (call.text === undefined) return undefined
  call.readsAsWritten ??= readsAsWritten(call.text, call)
  return call.readsAsWritten ? (call.bytes ?? call.text) : undefined
}

/**
 * Whether any node reads `text` as JSON.parse read it. Most clients write a call as JSON.stringify
 * writes it: then the text is what serialising its values writes (nothing repeated, no number or
 * escape written another way; known without serialising it when readStringified read the text,
 * else its parsed `envelope` is serialised), and the envelope must hold the four members and
 * nothing else (a node may read `Params` as `params`, where tollgate saw none). Other text is read
 * by readCallText: its checks on the envelope, the id written as serialising it writes it, and no
 * member repeated at any depth.
 */
function readsAsWritten(text: string, call: RpcCall): boolean {
  if (call.plainEnvelope && (call.envelope === undefined || JSON.stringify(call.envelope) === text))
    return true
  // its depth was bounded before it was parsed
  const read = readCallText(text)
  return (
    read !== undefined &&
    read.idText === JSON.stringify(call.id) &&
    read.members === envelopeMembers + countMembers(call.params)
  )
}

/** jsonrpc, id, method, params. */
const envelopeMembers = 4

/** Whether a parsed envelope's members are jsonrpc, id, method and params, and no other. */
function isPlainEnvelope(envelope: object): boolean {
  return (
    Object.keys(envelope).length === envelopeMembers &&
    Object.hasOwn(envelope, 'jsonrpc') &&
    Object.hasOwn(envelope, 'id') &&
    Object.hasOwn(envelope, 'method') &&
    Object.hasOwn(envelope, 'params')
  )
}

/** Object members in a parsed value, at every depth: fewer than written means a name was repeated. */
function countMembers(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let count = 0
  if (Array.isArray(value)) {
    for (const item of value) count += countMembers(item)
    return count
  }
  const object = value as Record<string, unknown>
  for (const key of Object.keys(object)) count += 1 + countMembers(object[key])
  return count
}
