import { CircuitBreaker, type CircuitBreakerOptions } from '../failsafe/CircuitBreaker.ts'
import { LatencyWindow } from '../failsafe/LatencyWindow.ts'
import { AttemptDurations, type AttemptOutcome } from './AttemptDurations.ts'
import type { Upstream } from './createUpstream.ts'

/** What readers may see of a member's breaker (its methods are the member's to call). */
export type BreakerView = Readonly<
  Pick<CircuitBreaker, 'state' | 'retryAt' | 'cooldownMs' | 'consecutiveFailures'>
>

/**
 * What readers (ranking, /readyz, /metrics, the dashboard, the head tracker) see of a pool member:
 * its health and head, read-only. Only the pool, its health checks and its history probes write
 * them, through PoolMember's methods.
 */
export type MemberView = {
  readonly upstream: Upstream
  /** Its place in the config: among equally healthy members, the earlier one is preferred. */
  readonly priority: number
  /** What a call's trail and the request log call it: its configured name, else `#N` (never its URL). */
  readonly trailName: string
  /** Its last known head: from its health checks and its newHeads notifications. */
  readonly head: bigint | undefined
  /**
   * The earliest block whose state it serves, and the earliest block it has (headers, bodies,
   * receipts): from the history prober (createHistoryProber) and raised by its refusals.
   * Undefined: not known, taken as everything.
   */
  readonly earliestState: bigint | undefined
  readonly earliestBlock: bigint | undefined
  /** Moving average of successful calls' latency, ms. */
  readonly latencyMs: number | undefined
  /** The quantile (0..1) of its last successful calls' latencies; undefined before the first. */
  latencyQuantile(quantile: number): number | undefined
  /** Moving average of failures, 0..1 (a degraded member, above one half, goes behind the others). */
  readonly errorRate: number
  /** Closed: in use. Open: kept off until a call after the cooldown, or the next health check, finds it well. */
  readonly breaker: BreakerView
  readonly lastError: string | undefined
  readonly requests: number
  readonly failures: number
  /** Hedges started because it had not answered a call in time (the hedge went to another member). */
  readonly hedges: number
  /** How long its calls' attempts took, by outcome (timeouts and failures too): /metrics reads them. */
  readonly attemptDurations: Pick<AttemptDurations, 'read'>
  /** Its error rate is above one half: it goes behind the others. */
  isDegraded(): boolean
  /** Its breaker is closed: calls go to it. */
  isInUse(): boolean
}

export type PoolMemberOptions = {
  breaker: CircuitBreakerOptions
  /** How many of its last successful calls' latencies are kept (the hedge delay is a quantile of them). */
  latencySamples: number
  /** It changed class (in use or not, degraded or not, its head): the pool ranks its members again. */
  onChange: () => void
  /**
   * Asks its node something cheap, within a bound: whether it answered. What its silent timeouts say
   * of its health is this check's word (recordSilence). Never rejects.
   */
  checkLiveness: (member: PoolMember) => Promise<boolean>
}

/** Silent timeouts waiting for one liveness check: how many, the last reason, whether one was a probe. */
type Silences = { count: number; reason: string; probe: boolean }

const latencyWeight = 0.1
const errorWeight = 0.05
/** Above this error rate a member is degraded. */
const degradedErrorRate = 0.5

/**
 * One upstream of a pool and what the pool knows of it. It owns its health: calls' outcomes
 * (recordSuccess, recordFailure), health checks (noteProbedHead, noteProbeFailure), heads and the
 * history it keeps; each change of class is told to the pool (onChange) so that its ranking is
 * made again before the next pick, not per call.
 */
export class PoolMember implements MemberView {
  #head: bigint | undefined
  /** When its last newHeads notification came (on the health checks' clock). */
  #notifiedAt: number | undefined
  #earliestState: bigint | undefined
  #earliestBlock: bigint | undefined
  #latencyMs: number | undefined
  readonly #latencies: LatencyWindow
  #errorRate = 0
  readonly #breaker: CircuitBreaker
  #lastError: string | undefined
  #requests = 0
  #failures = 0
  #hedges = 0
  readonly #attemptDurations = new AttemptDurations()
  readonly #onChange: () => void
  readonly #checkLiveness: PoolMemberOptions['checkLiveness']
  readonly #now: () => number
  readonly trailName: string
  /** When the latest request it answered was sent (a call's or a health check's): it was at work then. */
  #answeredSentAt = Number.NEGATIVE_INFINITY
  /** Silent timeouts waiting for the liveness check under way. */
  #silences: Silences | undefined

  constructor(
    readonly upstream: Upstream,
    readonly priority: number,
    options: PoolMemberOptions,
  ) {
    this.trailName = upstream.name ?? `#${priority + 1}`
    this.#latencies = new LatencyWindow(options.latencySamples)
    this.#breaker = new CircuitBreaker(options.breaker)
    this.#onChange = options.onChange
    this.#checkLiveness = options.checkLiveness
    // the pool's clock, which its breaker reads too
    this.#now = options.breaker.now
  }

  get head(): bigint | undefined {
    return this.#head
  }
  get earliestState(): bigint | undefined {
    return this.#earliestState
  }
  get earliestBlock(): bigint | undefined {
    return this.#earliestBlock
  }
  get latencyMs(): number | undefined {
    return this.#latencyMs
  }
  get errorRate(): number {
    return this.#errorRate
  }
  get breaker(): BreakerView {
    return this.#breaker
  }
  get lastError(): string | undefined {
    return this.#lastError
  }
  get requests(): number {
    return this.#requests
  }
  get failures(): number {
    return this.#failures
  }
  get hedges(): number {
    return this.#hedges
  }
  get attemptDurations(): Pick<AttemptDurations, 'read'> {
    return this.#attemptDurations
  }

  isDegraded(): boolean {
    return this.#errorRate > degradedErrorRate
  }

  isInUse(): boolean {
    return this.#breaker.state === 'closed'
  }

  /** A call it answered, in `latencyMs`. */
  recordSuccess(latencyMs: number): void {
    this.#requests++
    this.#latencyMs =
      this.#latencyMs === undefined
        ? latencyMs
        : this.#latencyMs + latencyWeight * (latencyMs - this.#latencyMs)
    this.#latencies.add(latencyMs)
    const reclassed = this.#countOutcome(false)
    if (this.#breaker.recordSuccess() || reclassed) {
      this.#lastError = undefined
      this.#onChange()
    }
  }

  /**
   * A call it failed, held against it: `down` (it did not answer) in its error rate and its
   * breaker, `degraded` (it answered, only not this call) in its error rate only. `probe`: it was
   * open when the call picked it (calls begun before it opened are not probes).
   */
  recordFailure(reason: string, blame: 'down' | 'degraded', probe = false): void {
    this.#requests++
    this.#failures++
    this.#lastError = reason
    const reclassed = this.#countOutcome(true)
    const opened = blame === 'down' && this.#breaker.recordFailure(probe)
    if (opened || reclassed) this.#onChange()
  }

  /** Its error rate (the only place it is written) moved by one outcome; whether it changed class (degraded or not). */
  #countOutcome(failed: boolean): boolean {
    const wasDegraded = this.isDegraded()
    this.#errorRate = failed
      ? this.#errorRate + errorWeight * (1 - this.#errorRate)
      : this.#errorRate * (1 - errorWeight)
    return wasDegraded !== this.isDegraded()
  }

  /** A call whose failure was not its own (the request's fault, the client gone): counted, not held against it. */
  recordRequest(): void {
    this.#requests++
  }

  /** Its node answered a request sent at `sentAt` (a call's, a health check's): it was at work then. */
  noteAnswered(sentAt: number): void {
    if (sentAt > this.#answeredSentAt) this.#answeredSentAt = sentAt
  }

  /** Whether its node has answered a request sent at `time` or later. */
  answeredSince(time: number): boolean {
    return this.#answeredSentAt >= time
  }

  /**
   * A call's request its node had until the call's time for it ran out, while it answered nothing
   * else (judgeTimeoutAtNode's `silent`): it may be down, or busy with slow work. Its liveness check
   * decides (one at a time: later silences wait for the same one): answered, they were the calls'
   * own length and are only counted; unanswered, each is a failure (error rate and breaker), as a
   * timeout always was. One key's slow calls so never take it out of use on their own.
   */
  recordSilence(reason: string, probe: boolean): void {
    const waiting = this.#silences
    if (waiting) {
      waiting.count++
      waiting.reason = reason
      waiting.probe ||= probe
      return
    }
    const silences: Silences = { count: 1, reason, probe }
    this.#silences = silences
    const sentAt = this.#now()
    void this.#checkLiveness(this).then((alive) => {
      this.#silences = undefined
      if (alive) {
        this.noteAnswered(sentAt)
        this.#requests += silences.count
        return
      }
      for (let index = 1; index < silences.count; index++) this.recordFailure(silences.reason, 'down')
      this.recordFailure(silences.reason, 'down', silences.probe)
    })
  }

  /** An attempt of a call on it ended, after `ms`: one per attempt, whatever its outcome. */
  recordAttempt(ms: number, outcome: AttemptOutcome): void {
    this.#attemptDurations.observe(ms, outcome)
  }

  /** A call it had not answered in time was hedged on another member. */
  recordHedge(): void {
    this.#hedges++
  }

  /** The quantile (0..1) of its last successful calls' latencies; undefined before the first. */
  latencyQuantile(quantile: number): number | undefined {
    return this.#latencies.quantile(quantile)
  }

  /** Whether an open member lets this call through as its probe (one per cooldown). */
  claimProbe(): boolean {
    return this.#breaker.claimProbe()
  }

  /**
   * It answered a health check with its head: it is well (back in use, failures forgotten) and its
   * error rate decays as if a call had succeeded (a member put behind the others gets no calls, so
   * without this it could never come back to the front). `sentAt`: when the check was sent; a head
   * notified after that is newer than the answer, and kept.
   */
  noteProbedHead(head: bigint, sentAt?: number): void {
    if (sentAt !== undefined) this.noteAnswered(sentAt)
    const notifiedSince = sentAt !== undefined && this.#notifiedAt !== undefined && this.#notifiedAt > sentAt
    if (!notifiedSince && this.#head !== head) {
      this.#head = head
      this.#onChange()
    }
    if (this.#breaker.state === 'open' || this.#lastError !== undefined) {
      this.#breaker.close()
      this.#lastError = undefined
      this.#onChange()
    }
    if (this.#countOutcome(false)) this.#onChange()
  }

  /** It failed a health check: out of use until a call after the cooldown, or the next check, finds it well. */
  noteProbeFailure(reason: string): void {
    this.#lastError = reason
    if (this.#breaker.trip()) this.#onChange()
  }

  /** A head from its newHeads subscription (`at`: when, on the health checks' clock): its lag, not its health (that is its HTTP endpoint's). */
  noteNotifiedHead(head: bigint, at?: number): void {
    if (at !== undefined) this.#notifiedAt = at
    if (this.#head === head) return
    this.#head = head
    this.#onChange()
  }

  /** Its history probe found the earliest block whose state it serves. */
  noteEarliestState(block: bigint): void {
    this.#earliestState = block
  }

  /** Its history probe found the earliest block it has. */
  noteEarliestBlock(block: bigint): void {
    this.#earliestBlock = block
  }

  /**
   * It refused blocks up to `to`, at or below its head, for want of `missing` (pruned state or
   * history): the earliest block (or state) it serves is above that block, remembered until its
   * next history probe says otherwise. A range ending above its head says it lags, not what it
   * keeps. Whether anything was learned.
   */
  learnMissing(missing: bigint, to: bigint, needsState: boolean): boolean {
    if (this.#head === undefined || to > this.#head) return false
    const earliest = needsState ? this.#earliestState : this.#earliestBlock
    if (earliest !== undefined && earliest > missing) return false
    if (needsState) this.#earliestState = missing + 1n
    else this.#earliestBlock = missing + 1n
    return true
  }
}
