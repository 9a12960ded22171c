import type { Buffer } from 'node:buffer'
import type { TollgateError } from '../errors/TollgateError.ts'
import type { AnswerParts } from './AnswerParts.ts'

export type RpcId = string | number | null

/** One well-formed JSON-RPC call. A call without an `id` member is a notification: it gets no answer. */
export type RpcCall = {
  id: RpcId
  method: string
  params: unknown[]
  isNotification: boolean
  /**
   * The client's own text of a single call with an id, to be forwarded as written when its params
   * needed no change and a node reads it as tollgate did (asWrittenBody); undefined in a batch.
   */
  text: string | undefined
  /** The bytes that text came in, when the transport kept them and they are UTF-8: sent as they are. */
  bytes: Buffer | undefined
  /** readStringified read that text: it is what serialising the call's values writes. */
  stringified: boolean
  /**
   * The object JSON.parse made of that text when readStringified did not read it, to compare the
   * text with its serialisation (asWrittenBody); undefined otherwise (and for a call with no text).
   */
  envelope: object | undefined
  /** Its envelope's members are jsonrpc, id, method and params, and no other. */
  plainEnvelope: boolean
  /** Whether a node reads the text as tollgate did (asWrittenBody); undefined until it is read. */
  readsAsWritten: boolean | undefined
}

/** One element of a request: a call, or the envelope error that stopped it before it could run. */
export type RpcEntry = { call: RpcCall } | { error: TollgateError; id: RpcId }

/**
 * `rawIds`: the client's text of ids JSON.parse and JSON.stringify would not give back (past 2^53,
 * `1.50`, `-0`), by the index their stand-in string ids carry (withRawIds); absent for nearly every
 * request.
 */
export type RpcRequest = ({ isBatch: false; entry: RpcEntry } | { isBatch: true; entries: RpcEntry[] }) & {
  rawIds?: string[]
}

/**
 * The serialised JSON text of one response object, the bytes an upstream sent for it, or such bytes
 * in parts (a kept result around which its caller's id is written).
 */
export type RpcPayload = string | Buffer | AnswerParts
