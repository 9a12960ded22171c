import { Buffer } from 'node:buffer'
import { InternalError } from './rpcErrors.ts'
import { NetworkReconfiguredError, ShuttingDownError } from './socketErrors.ts'
import { TollgateError } from './TollgateError.ts'

/** The error member of a JSON-RPC answer: code, message, and the 402/429 `event` and `details`. */
export type WireError = { code: number; message: string; [field: string]: unknown }

/**
 * Where an error leaves tollgate, each with its body shape (docs/errors.md):
 * `jsonrpc` `{"jsonrpc":"2.0","id","error":{"code","message",...}}` (JSON-RPC over HTTP and
 * WebSocket, refused upgrades, every route without a shape of its own, /metrics included);
 * `gas` `{"statusCode","message",...}` (the Gas REST API); `admin` `{"error":{"message"}}`.
 */
export type WireSurface = 'jsonrpc' | 'gas' | 'admin'

export type WireErrorAnswer = {
  httpStatus: number
  /** The JSON body, to be serialised as it is. */
  body: Record<string, unknown>
  /** `retry-after` of a 402 or 429, `www-authenticate` of a 401 that asks for a bearer token. */
  headers: Record<string, string>
  /** The JSON-RPC error member, also for the callers that put it in an envelope of their own. */
  error: WireError
}

/**
 * The one place where any thrown value becomes a wire error: its HTTP status, body and headers. A
 * value that is not a TollgateError is a bug: it answers 500 `internal error`, with no details.
 */
export function toWireError(
  err: unknown,
  surface: WireSurface,
  id: string | number | null = null,
): WireErrorAnswer {
  const known = err instanceof TollgateError ? err : new InternalError({ cause: err })
  const error: WireError = { code: known.code, message: known.message, ...known.wireFields }
  const headers: Record<string, string> = {}
  if (known.retryAfterSeconds !== undefined) headers['retry-after'] = String(known.retryAfterSeconds)
  if (known.wwwAuthenticate !== undefined) headers['www-authenticate'] = known.wwwAuthenticate
  const body =
    surface === 'jsonrpc'
      ? { jsonrpc: '2.0', id, error }
      : surface === 'gas'
        ? { statusCode: known.httpStatus, message: known.message, ...known.wireFields }
        : { error: { message: known.message } }
  return { httpStatus: known.httpStatus, body, headers, error }
}

/** A WebSocket close frame: its code and reason. */
export type CloseFrame = { code: number; reason: string }

/** A close frame's reason holds at most 123 bytes (RFC 6455 §5.5). */
const maxCloseReasonBytes = 123

/**
 * The one place where an error that ends an open WebSocket becomes its close frame: 1001 (going
 * away) when the gateway stops, 1011 for a failure of tollgate's own (5xx), else 1008 (policy
 * violation); the reason is the error's wire message, cut to what a close frame holds.
 */
export function toCloseFrame(err: unknown): CloseFrame {
  const known = err instanceof TollgateError ? err : new InternalError({ cause: err })
  const goingAway = known instanceof ShuttingDownError || known instanceof NetworkReconfiguredError
  const code = goingAway ? 1001 : known.httpStatus >= 500 ? 1011 : 1008
  let reason = known.message
  while (Buffer.byteLength(reason) > maxCloseReasonBytes) reason = reason.slice(0, -1)
  // never half a character: a surrogate pair's first half left alone at the end
  if (reason !== known.message && /[\uD800-\uDBFF]$/.test(reason)) reason = reason.slice(0, -1)
  return { code, reason }
}
