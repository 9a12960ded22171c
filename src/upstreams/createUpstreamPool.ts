import { setTimeout as delay } from 'node:timers/promises'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/errors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { CircuitBreaker } from '../failsafe/CircuitBreaker.ts'
import type { Upstream } from './createUpstream.ts'

/**
 * One upstream and what the pool knows of it. Written by the pool (call outcomes) and the head
 * tracker (heads, probes); read by requests through the pool's ranking, and by /readyz and /metrics.
 */
export type PoolMember = {
  readonly upstream: Upstream
  /** Its place in the config: among equally healthy members, the earlier one is preferred. */
  readonly priority: number
  /** Its last known head: from the head tracker, raised by eth_blockNumber answers. */
  head: bigint | undefined
  /** Moving average of successful calls' latency, ms. */
  latencyMs: number | undefined
  /** Moving average of failures, 0..1 (a member above one half goes behind the others). */
  errorRate: number
  /** Closed: in use. Open: kept off until a call after the cooldown, or the next head poll, finds it well. */
  readonly breaker: CircuitBreaker
  lastError: string | undefined
  requests: number
  failures: number
}

export type SendOptions = {
  /** performance.now() by which the answer must be in (default: timeoutMs from now); past it, a 504. */
  deadline?: number
  /** Transient failures (timeout, connection error, 5xx, 429, garbage) are retried, on another member first. */
  retry?: boolean
  /** The answer depends on the head: members lagging the network's head are not used. */
  headSensitive?: boolean
  /** Partners follow if this pool fails: no attempt waits longer than attemptTimeoutMs. */
  fallback?: boolean
  cancellation?: Cancellation | undefined
}

export type UpstreamPool = {
  members: readonly PoolMember[]
  /**
   * Sends one JSON-RPC body to the best member, retrying per `options`. Rejects with
   * UpstreamTimeoutError when the deadline passes, UpstreamUnavailableError when no member could
   * answer, and ClientGoneError when the client went away (which is not an upstream failure).
   */
  send(body: string, options?: SendOptions): Promise<Buffer>
  /** The highest head among members in use (undefined before any is known). */
  head(): bigint | undefined
  /** The head tracker's findings: a member's head, or that it failed to answer a health check. */
  noteHead(member: PoolMember, head: bigint): void
  noteProbeFailure(member: PoolMember, reason: string): void
  isReachable(): boolean
  close(): Promise<void>
}

export type UpstreamPoolOptions = {
  /** A call's deadline when the caller gives none. */
  timeoutMs: number
  /** Longest wait for one member when another could still be tried. */
  attemptTimeoutMs: number
  /** Attempts per call, the first included (idempotent calls only; others get one). */
  maxAttempts: number
  /** Members further than this behind the network's head are not used for head-sensitive calls. */
  maxLagBlocks: number
  /** Consecutive failures that open a member's breaker. */
  breakerFailures: number
  breakerCooldownMs: number
  breakerMaxCooldownMs: number
  now?: () => number
}

export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
  constructor() {
    super('the client went away')
  }
}

/** A failure that left the request unsent is safe to retry even for calls that are not idempotent. */
const unsentErrorCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'])

const latencyWeight = 0.1
const errorWeight = 0.05

/**
 * A network's upstreams as one: ranks them by health (breaker, error rate, lag behind the head) and
 * config order, sends each call to the best one, retries idempotent calls on transient failures
 * within the call's deadline, and keeps calls off dead members with a per-member circuit breaker.
 */
export function createUpstreamPool(upstreams: Upstream[], options: UpstreamPoolOptions): UpstreamPool {
  const now = options.now ?? (() => performance.now())
  const members: PoolMember[] = upstreams.map((upstream, priority) => ({
    upstream,
    priority,
    head: undefined,
    latencyMs: undefined,
    errorRate: 0,
    breaker: new CircuitBreaker({
      failures: options.breakerFailures,
      cooldownMs: options.breakerCooldownMs,
      maxCooldownMs: options.breakerMaxCooldownMs,
      now,
    }),
    lastError: undefined,
    requests: 0,
    failures: 0,
  }))

  // Rankings are recomputed when a member changes class (breaker, error rate, lag), not per call.
  let ranked: PoolMember[] = members
  let rankedAtHead: PoolMember[] = members
  let dirty = true
  let networkHead: bigint | undefined

  function rank(): void {
    dirty = false
    networkHead = undefined
    for (const member of members) {
      if (member.breaker.state === 'closed' && member.head !== undefined) {
        if (networkHead === undefined || member.head > networkHead) networkHead = member.head
      }
    }
    const closed = members.filter((member) => member.breaker.state === 'closed')
    closed.sort((a, b) => Number(a.errorRate > 0.5) - Number(b.errorRate > 0.5) || a.priority - b.priority)
    ranked = closed
    const top = networkHead
    rankedAtHead =
      top === undefined
        ? closed
        : closed
            .filter(
              (member) => member.head === undefined || top - member.head <= BigInt(options.maxLagBlocks),
            )
            // among equally healthy members, those at the head first, so that a client does not see
            // the head go backwards (the sort is stable: config order otherwise)
            .sort(
              (a, b) =>
                Number(a.errorRate > 0.5) - Number(b.errorRate > 0.5) ||
                Number(a.head !== top) - Number(b.head !== top),
            )
  }

  /**
   * The next member to try: the best untried one, else (unless `untriedOnly`) the best one, else an
   * open member whose cooldown is over, which gets this call as its probe.
   */
  function pick(headSensitive: boolean, tried: Set<PoolMember> | undefined, untriedOnly: boolean) {
    if (dirty) rank()
    const order = headSensitive ? rankedAtHead : ranked
    for (const member of order) if (!tried?.has(member)) return member
    if (untriedOnly) return undefined
    if (order.length > 0) return order[0]
    // members are in config order: the first open one whose cooldown is over
    return members.find((member) => !tried?.has(member) && member.breaker.claimProbe())
  }

  /** Whether a member other than `member` is left to try. */
  function hasOther(headSensitive: boolean, member: PoolMember, tried: Set<PoolMember> | undefined): boolean {
    for (const each of headSensitive ? rankedAtHead : ranked) {
      if (each !== member && !tried?.has(each)) return true
    }
    return false
  }

  function succeeded(member: PoolMember, latencyMs: number): void {
    member.requests++
    member.latencyMs =
      member.latencyMs === undefined
        ? latencyMs
        : member.latencyMs + latencyWeight * (latencyMs - member.latencyMs)
    const wasDegraded = member.errorRate > 0.5
    member.errorRate *= 1 - errorWeight
    if (member.breaker.recordSuccess() || wasDegraded !== member.errorRate > 0.5) {
      member.lastError = undefined
      dirty = true
    }
  }

  /** `probe`: the member was open when this call picked it (calls begun before it opened are not probes). */
  function failed(member: PoolMember, reason: string, probe: boolean): void {
    member.requests++
    member.failures++
    member.lastError = reason
    const wasDegraded = member.errorRate > 0.5
    member.errorRate += errorWeight * (1 - member.errorRate)
    if (member.breaker.recordFailure(probe) || wasDegraded !== member.errorRate > 0.5) dirty = true
  }

  async function send(body: string, sendOptions: SendOptions = {}): Promise<Buffer> {
    const { retry = false, headSensitive = false, fallback = false, cancellation } = sendOptions
    const deadline = sendOptions.deadline ?? now() + options.timeoutMs
    const maxAttempts = retry ? options.maxAttempts : 1
    let tried: Set<PoolMember> | undefined
    const failures: string[] = []
    // an attempt given the rest of the deadline timed out (its timer may fire a little before `now()` agrees)
    let deadlinePassed = false
    for (let attempt = 0; ; attempt++) {
      // calls that are not idempotent move on only when the failed attempt never reached the node
      const member = pick(headSensitive, tried, attempt >= maxAttempts)
      if (!member) break
      // the same member again (it is the only one left): a short pause first, within the deadline
      if (tried?.has(member)) await delay(Math.max(0, Math.min(25 * attempt, (deadline - now()) / 4)))
      const remaining = deadline - now()
      if (remaining <= 0) break
      // one attempt waits at most attemptTimeoutMs while something else could still answer in time:
      // another member, or (`fallback`) the partners; the last one may use the rest of the deadline
      const bounded = attempt + 1 < maxAttempts && (fallback || hasOther(headSensitive, member, tried))
      const timeoutMs = bounded || fallback ? Math.min(remaining, options.attemptTimeoutMs) : remaining
      const probe = member.breaker.state === 'open'
      const started = now()
      const outcome = await attemptOnce(member.upstream, body, timeoutMs, cancellation)
      if ('body' in outcome) {
        succeeded(member, now() - started)
        return outcome.body
      }
      if (outcome.clientGone) throw new ClientGoneError()
      // a refusal of this request (413 for a big batch, say) says nothing of the node's health:
      // counting it would let one client's requests take upstreams out of use for everyone
      if (outcome.refused) member.requests++
      else failed(member, outcome.reason, probe)
      failures.push(`${member.upstream.label}: ${outcome.reason}`)
      deadlinePassed = outcome.timedOut === true && timeoutMs >= remaining
      if (deadlinePassed || (attempt + 1 >= maxAttempts && !outcome.unsent)) break
      tried ??= new Set()
      tried.add(member)
    }
    const logDetails = failures.length > 0 ? failures.join('; ') : 'every upstream is failing'
    if (deadlinePassed || deadline - now() <= 1) throw new UpstreamTimeoutError({ logDetails })
    throw new UpstreamUnavailableError({ logDetails })
  }

  return {
    members,
    send,
    head() {
      if (dirty) rank()
      return networkHead
    },
    noteHead(member, head) {
      if (member.head !== head) dirty = true
      member.head = head
      // a node that answers its health check is well: back in use, failures forgotten
      if (member.breaker.state === 'open' || member.lastError !== undefined) {
        member.breaker.close()
        member.lastError = undefined
        dirty = true
      }
      // and its error rate decays as if a call had succeeded: a member put behind the others gets
      // no calls, so without this it could never come back to the front
      const wasDegraded = member.errorRate > 0.5
      member.errorRate *= 1 - errorWeight
      if (wasDegraded !== member.errorRate > 0.5) dirty = true
    },
    noteProbeFailure(member, reason) {
      member.lastError = reason
      if (member.breaker.trip()) dirty = true
    },
    isReachable: () => members.some((member) => member.breaker.state === 'closed'),
    close: async () => {
      await Promise.all(members.map((member) => member.upstream.close()))
    },
  }
}

type Failure = {
  reason: string
  clientGone?: boolean
  unsent?: boolean
  timedOut?: boolean
  /** The node refused this request, not every request: not held against its health. */
  refused?: boolean
}

/**
 * Statuses that refuse one request for what it is (400, 404, 405, 413, 414, 422, ...). 401 and 403
 * (the gateway's credentials for that upstream), 408 and 429 (load) count against the upstream.
 */
function refusesRequest(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 408 && status !== 429
}

/**
 * One call to one upstream, bounded by `timeoutMs` and the client's cancellation. It ends when
 * stopped even if the request never started (still queued for a connection, it has no abort yet).
 */
function attemptOnce(
  upstream: Upstream,
  body: string,
  timeoutMs: number,
  cancellation: Cancellation | undefined,
): Promise<{ body: Buffer } | Failure> {
  return new Promise((resolve) => {
    let abort: ((reason: Error) => void) | undefined
    let stopped: Failure | undefined
    let unsubscribe: (() => void) | undefined
    const end = (outcome: { body: Buffer } | Failure) => {
      clearTimeout(timer)
      unsubscribe?.()
      resolve(outcome)
    }
    const stop = (failure: Failure) => {
      if (stopped) return
      stopped = failure
      abort?.(new Error(failure.reason))
      end(failure)
    }
    const timer = setTimeout(
      () => stop({ reason: `no answer within ${timeoutMs} ms`, timedOut: true }),
      timeoutMs,
    )
    unsubscribe = cancellation?.onCancel(() => stop({ reason: 'the client went away', clientGone: true }))
    if (stopped) return
    upstream
      .post(body, {
        onStart(abortRequest) {
          abort = abortRequest
          if (stopped) abortRequest(new Error(stopped.reason))
        },
      })
      .then(
        (response) => {
          if (stopped) return
          if (response.status < 200 || response.status >= 300) {
            end({ reason: `HTTP ${response.status}`, refused: refusesRequest(response.status) })
          } else if (!isJsonObjectOrArray(response.body)) end({ reason: 'an answer that is not JSON' })
          else end({ body: response.body })
        },
        (err: Error & { code?: string }) => {
          if (stopped) return
          end({ reason: err.message, unsent: err.code !== undefined && unsentErrorCodes.has(err.code) })
        },
      )
  })
}

/** A cheap check that an answer is JSON at all, without parsing it: the first non-blank byte. */
function isJsonObjectOrArray(body: Buffer): boolean {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    return byte === 0x7b || byte === 0x5b
  }
  return false
}
