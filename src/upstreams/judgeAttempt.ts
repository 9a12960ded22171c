import type { Buffer } from 'node:buffer'
import { NodeErrorAnswer } from '../errors/callEndings.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/upstreamErrors.ts'
import { type NodeError, readNodeError } from '../jsonrpc/readNodeError.ts'
import type { UpstreamResponse } from './createUpstream.ts'
import { gasCapOf } from './gasCapOf.ts'
import { classifyNodeError, missingBlockOf } from './nodeErrors.ts'

/** How one attempt on one upstream ended, before anyone judged it. */
export type AttemptResult =
  | { response: UpstreamResponse }
  | { error: Error & { code?: string } }
  /** `sent`: the request had gone out on a connection (the node had it); else it was still queued for one. */
  | { timedOutMs: number; sent?: boolean }
  | { clientGone: true }
  /** Stopped because another attempt of the same call (a hedge) answered first. */
  | { superseded: true }

/**
 * What an attempt means for the call and for the upstream. An `answer` goes to the client (results,
 * reverts and every other error the node rightly answered); anything else is a failure, and the call
 * may move on to another upstream.
 */
export type Verdict = { answer: Buffer; gasCap?: bigint } | AttemptFailure

export type AttemptFailure = {
  reason: string
  /**
   * What it says of the upstream: `down` counts as a failure (error rate and breaker), `degraded`
   * in its error rate only (it answers, but not this), `none` not at all (this request's fault),
   * `silent` as its liveness check decides (it said nothing about anything: judgeTimeoutAtNode).
   */
  blame: 'down' | 'degraded' | 'none' | 'silent'
  /** The node never saw the request (the connection was refused): safe to send again, idempotent or not. */
  unsent?: boolean
  timedOut?: boolean
  /** It timed out while the node had the request: the node is not asked it again within the call. */
  atNode?: boolean
  /**
   * The node worked on it until its time ran out while it answered other requests: slow by its
   * nature (a heavy eth_call, a trace), the key's and not the node's (judgeTimeoutAtNode).
   */
  worked?: boolean
  clientGone?: boolean
  /** Stopped because another attempt answered first: it says nothing of the upstream. */
  superseded?: boolean
  /** The node's own error answer: the client gets the last one if no upstream answers (docs/compatibility.md §7). */
  nodeAnswer?: Buffer
  /** The block a node's refusal for want of data names (missingBlockOf), if it names one. */
  missingBlock?: bigint | undefined
  /**
   * The client's answer budget refused the answer on its way in (too large, or the process is busy):
   * the call's answer, whatever another upstream would send.
   */
  refusal?: TollgateError
}

/** A failure that left the request unsent is safe to retry even for calls that are not idempotent. */
const unsentErrorCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * The one place that decides retryability (with mayRetry and mayFailOver, beside it): whether an attempt's outcome
 * is the client's answer or a failure worth another upstream, and what it says of the upstream's health. Answers that are
 * results are judged by two byte checks (status, first byte) and a length test; only a short
 * answer holding `"error"` is parsed.
 */
export function judgeAttempt(result: AttemptResult): Verdict {
  if ('clientGone' in result) return { reason: 'the client went away', blame: 'none', clientGone: true }
  if ('superseded' in result) {
    return { reason: 'another upstream answered first', blame: 'none', superseded: true }
  }
  if ('timedOutMs' in result) {
    const reason = `no answer within ${result.timedOutMs} ms`
    return result.sent
      ? { reason, blame: 'down', timedOut: true, atNode: true }
      : { reason, blame: 'down', timedOut: true }
  }
  if ('error' in result) {
    if (result.error instanceof TollgateError) {
      return { reason: result.error.message, blame: 'none', refusal: result.error }
    }
    const { code, message } = result.error
    return { reason: message, blame: 'down', unsent: code !== undefined && unsentErrorCodes.has(code) }
  }
  const { status, body } = result.response
  let error: NodeError | undefined
  if (status < 200 || status >= 300) {
    // a refusal of this request (413 for a big batch, say) says nothing of the node's health:
    // counting it would let one client's requests take upstreams out of use for everyone
    const refuses = refusesRequest(status)
    // with a JSON-RPC error, it is the node's answer to this request, judged as if it came with a 200
    error = refuses && isJsonObjectOrArray(body) ? readNodeError(body) : undefined
    if (!error) return { reason: `HTTP ${status}`, blame: refuses ? 'none' : 'down' }
  } else {
    if (!isJsonObjectOrArray(body)) return { reason: 'an answer that is not JSON', blame: 'down' }
    error = readNodeError(body)
    if (!error) return { answer: body }
  }
  const kind = classifyNodeError(error)
  if (kind === undefined) {
    // the client's answer, unless the call's gas was over the node's per-transaction cap (EIP-7825)
    const gasCap = gasCapOf(error)
    return gasCap === undefined ? { answer: body } : { answer: body, gasCap }
  }
  const reason = `${error.code}: ${typeof error.message === 'string' ? error.message.slice(0, 200) : ''}`
  // a node out of capacity is treated as if it had answered HTTP 429
  if (kind === 'capacity') return { reason, blame: 'down' }
  if (kind === 'missingData') {
    return { reason, blame: 'degraded', nodeAnswer: body, missingBlock: missingBlockOf(error) }
  }
  return { reason, blame: 'none', nodeAnswer: body }
}

/**
 * A timeout of a request the node had (`atNode`), judged by what the node did meanwhile. When it
 * answered a request sent after this one (another call's, a health check) before this one's time ran
 * out (`answeredMeanwhile`), the node was at work, not down: the call is slow by its nature (a heavy
 * eth_call, a trace), which is its key's doing, so it is charged and nothing is held against the
 * node (one key's slow calls never take an upstream out of use for the others). When it answered
 * nothing, the node may be overloaded or hung: the caller pays nothing, and whether the node is
 * down is for its liveness check to say (`silent`), not for one call's length.
 */
export function judgeTimeoutAtNode(failure: AttemptFailure, answeredMeanwhile: boolean): AttemptFailure {
  if (!answeredMeanwhile) return { ...failure, blame: 'silent' }
  return { ...failure, reason: `${failure.reason}, answering others meanwhile`, blame: 'none', worked: true }
}

/**
 * Whether a call may go on to another attempt after this failure: not once the client is gone,
 * another attempt has answered, or the client's answer budget refused the answer; otherwise while it has attempts left (`attemptsLeft`: idempotent
 * calls get maxAttempts, others one), or whatever it has left when the request never reached a
 * node (`unsent`: safe to send again, idempotent or not).
 */
export function mayRetry(failure: AttemptFailure, attemptsLeft: boolean): boolean {
  if (failure.clientGone || failure.superseded || failure.refusal) return false
  return attemptsLeft || failure.unsent === true
}

/**
 * Statuses that refuse one request for what it is (400, 404, 405, 413, 414, 422, ...). 401 and 403
 * (the gateway's credentials for that upstream), 408 and 429 (load) count against the upstream.
 */
function refusesRequest(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 408 && status !== 429
}

/** A cheap check that an answer is JSON at all, without parsing it: the first non-blank byte. */
function isJsonObjectOrArray(body: Buffer): boolean {
  for (let index = 0; index < body.length; index++) {
    const byte = body[index]
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    return byte === 0x7b || byte === 0x5b
  }
  return false
}

/**
 * Whether a call the network's upstreams failed may go on to its partner providers (when the call
 * may fail over at all: plan, header or key switch, method): when no upstream answered in time, none
 * could answer, or every one answered an error another node may not have (NodeErrorAnswer). Never
 * once the client is gone, nor for an error of the call itself, nor for a call slow by its nature
 * (a node worked on it until its time ran out: a partner would work on it as long).
 */
export function mayFailOver(
  err: unknown,
): err is UpstreamUnavailableError | UpstreamTimeoutError | NodeErrorAnswer {
  return (
    err instanceof UpstreamUnavailableError ||
    (err instanceof UpstreamTimeoutError && !err.nodeWorked) ||
    err instanceof NodeErrorAnswer
  )
}
