import { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { ClientGoneError } from '../errors/callEndings.ts'
import { RefusalsLeftOutError } from '../errors/limitErrors.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toWireError } from '../errors/toWireError.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { readNodeError } from '../jsonrpc/readNodeError.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import type { CallOutcome } from '../pipeline/callOutcome.ts'
import { type LoggedRequest, type RequestLogTap, wholeRequestLabel } from '../pipeline/requestLogTap.ts'
import type { RequestLogRow, RequestOutcome } from './requestLogStore.ts'
import { truncateClientAddress } from './truncateClientAddress.ts'

/** What the request log keeps of what: config `requestLog` (docs/config.md). */
export type RequestLogSettings = {
  sampleRate: number
  fullClientAddress: boolean
  params: boolean
  maxParamsChars: number
}

/** Rows of requests refused at the door, per key and minute (a stranger with a key's value cannot crowd its account's log). */
/** @internal exported for its tests */
export const maxUnprovenRowsPerMinute = 30

/** The longest user agent, network name and error reason kept. */
const maxUserAgentChars = 256
/** A path's network is kept as sent when the request was refused for it: a stranger's URL is not stored whole. */
const maxNetworkChars = 64
const maxReasonChars = 200
/** A node's answer longer than this is not read for an error (an error answer is short). */
const maxErrorAnswerBytes = 65_536

/** What a call's failure was, as a row keeps it. */
type Failure = { outcome: Exclude<RequestOutcome, 'ok'>; code: number | null; error: string; reason: string }

/**
 * The rows of calls (`add` takes each): a successful call is kept when a draw of `random` falls under
 * the sample rate (drawn first: most calls end there), every error and refusal always.
 */
export function createRequestLogTap(
  settings: RequestLogSettings,
  add: (row: RequestLogRow) => void,
  random: () => number = Math.random,
  now: () => number = Date.now,
): RequestLogTap {
  const rowOf = (
    request: LoggedRequest,
    method: string,
    status: number,
    credits: number,
    failure: Failure | undefined,
    endedMs: number,
  ): RequestLogRow => {
    const { keyRequest } = request
    return {
      timeMs: now(),
      accountId: request.key.apiKey.account.id,
      keyId: request.key.apiKey.id,
      network: request.network.slice(0, maxNetworkChars),
      method,
      outcome: failure?.outcome ?? 'ok',
      status,
      code: failure?.code ?? null,
      error: failure?.error ?? null,
      reason: failure?.reason ?? null,
      credits,
      durationMs: Math.max(0, Math.round(endedMs - request.startedMs)),
      cacheHit: false,
      upstream: null,
      clientAddress: settings.fullClientAddress
        ? (keyRequest.clientAddress ?? null)
        : truncateClientAddress(keyRequest.clientAddress),
      userAgent: keyRequest.userAgent === undefined ? null : keyRequest.userAgent.slice(0, maxUserAgentChars),
      params: null,
      answer: null,
    }
  }
  const refused = (request: LoggedRequest, method: string, err: unknown, credits: number) => {
    const failure = failureOfError(err)
    add(rowOf(request, method, toWireError(err, 'jsonrpc').httpStatus, credits, failure, performance.now()))
  }
  /** Per key id: the minute counted, the rows kept in it, the rows left out. Keys are the registry's: bounded. */
  const doorWindows = new Map<number, { minute: number; kept: number; leftOut: number }>()
  return {
    refused,
    refusedAtTheDoor(request, err) {
      const minute = Math.floor(now() / 60_000)
      const keyId = request.key.apiKey.id
      let window = doorWindows.get(keyId)
      if (window?.minute !== minute) {
        if (window && window.leftOut > 0) {
          const note = new RefusalsLeftOutError(window.leftOut)
          add(rowOf(request, wholeRequestLabel, note.httpStatus, 0, failureOfError(note), performance.now()))
        }
        window = { minute, kept: 0, leftOut: 0 }
        doorWindows.set(keyId, window)
      }
      if (window.kept >= maxUnprovenRowsPerMinute) {
        window.leftOut++
        return
      }
      window.kept++
      refused(request, wholeRequestLabel, err, 0)
    },
    calls(request, calls, outcomes) {
      for (let index = 0; index < outcomes.length; index++) {
        const outcome = outcomes[index] as CallOutcome
        const drawn = random() < settings.sampleRate
        const failure = failureOf(outcome)
        if (!drawn && failure === undefined) continue
        // each call's own time, a batch's included (0: not stamped, its end is now)
        const endedMs = outcome.endedMs || performance.now()
        const row = rowOf(request, outcome.method, outcome.httpStatus, outcome.credits, failure, endedMs)
        const trail = outcome.trail
        if (trail) {
          row.cacheHit = trail.cache === 'hit'
          const by = trail.answeredBy() ?? trail.attempts.at(-1)
          if (by) row.upstream = by.partner ? 'partner' : by.upstream
        }
        if (settings.params) {
          const call = calls[index]
          row.params = call?.ok
            ? cut(JSON.stringify(call.call.params ?? null), settings.maxParamsChars)
            : null
          row.answer = cut(textOf(outcome.payload, settings.maxParamsChars), settings.maxParamsChars)
        }
        add(row)
      }
    },
  }
}

/** A call's failure: its error (refused before it ran, or failed), or a node's error answer; undefined for a result. */
function failureOf(outcome: CallOutcome): Failure | undefined {
  // a client gone is no failure of the call: kept only when sampled
  if (outcome.error instanceof ClientGoneError) return undefined
  if (outcome.error !== undefined) return failureOfError(outcome.error)
  return nodeErrorOf(outcome.payload)
}

function failureOfError(err: unknown): Failure {
  const { httpStatus, error } = toWireError(err, 'jsonrpc')
  const details = typeof error.details === 'string' ? error.details : error.message
  return {
    outcome: isRefusal(httpStatus) ? 'refused' : 'error',
    code: error.code,
    error: err instanceof TollgateError ? err.name : 'InternalError',
    reason: details.slice(0, maxReasonChars),
  }
}

/** Refusals of the key's own limits and rules: credentials, allowlists, credits and rates. */
function isRefusal(status: number): boolean {
  return status === 401 || status === 402 || status === 403 || status === 429
}

/** A node's JSON-RPC error answer (a revert, a missing block); a result costs a look at its first bytes. */
function nodeErrorOf(payload: RpcPayload): Failure | undefined {
  if (payload instanceof AnswerParts) return undefined
  const error = readNodeError(payload, maxErrorAnswerBytes)
  if (error === undefined) return undefined
  const { code, message } = error
  return {
    outcome: 'error',
    code: typeof code === 'number' && Number.isSafeInteger(code) ? code : null,
    error: 'NodeError',
    reason: (typeof message === 'string' ? message : '').slice(0, maxReasonChars),
  }
}

/** The start of an answer's text, at least `maxChars` of it when it is that long (no copy of a large answer whole). */
function textOf(payload: RpcPayload, maxChars: number): string {
  if (typeof payload === 'string') return payload
  const maxBytes = maxChars * 4 + 4
  if (Buffer.isBuffer(payload)) return payload.subarray(0, maxBytes).toString()
  const parts: Buffer[] = []
  let bytes = 0
  for (const part of payload.parts) {
    if (bytes >= maxBytes) break
    parts.push(part)
    bytes += part.length
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString()
}

function cut(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`
}
