import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/upstreamErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { CircuitBreaker } from '../failsafe/CircuitBreaker.ts'
import { type BackoffPolicy, getBackoffMs } from '../failsafe/getBackoffMs.ts'
import { LatencyWindow } from '../failsafe/LatencyWindow.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { withHedge } from '../failsafe/withHedge.ts'
import { retryAfter } from '../failsafe/withRetry.ts'
import type { AnswerBudget } from './AnswerBudget.ts'
import { answerResentTransaction } from './answerResentTransaction.ts'
import { attemptUpstream } from './attemptUpstream.ts'
import { type BlockPin, createMemberRanking } from './createMemberRanking.ts'
import type { Upstream } from './createUpstream.ts'
import { type AttemptFailure, mayRetry, NodeErrorAnswer, type Verdict } from './judgeAttempt.ts'
import { toGasCappedBody } from './toGasCappedBody.ts'

/**
 * One upstream and what the pool knows of it. Written by the pool (call outcomes, refusals for want
 * of history), the head tracker (heads, probes) and the history prober (earliest state and block);
 * read by requests through the pool's ranking, and by /readyz and /metrics.
 */
export type PoolMember = {
  readonly upstream: Upstream
  /** Its place in the config: among equally healthy members, the earlier one is preferred. */
  readonly priority: number
  /** Its last known head: from the head tracker, raised by eth_blockNumber answers. */
  head: bigint | undefined
  /**
   * The earliest block whose state it serves, and the earliest block it has (headers, bodies,
   * receipts): from the history prober (createHistoryProber) and raised by its refusals.
   * Undefined: not known, taken as everything.
   */
  earliestState: bigint | undefined
  earliestBlock: bigint | undefined
  /** Moving average of successful calls' latency, ms. */
  latencyMs: number | undefined
  /** Its last successful calls' latencies: the hedge delay is a quantile of them. */
  readonly latencies: LatencyWindow
  /** Moving average of failures, 0..1 (a member above one half goes behind the others). */
  errorRate: number
  /** Closed: in use. Open: kept off until a call after the cooldown, or the next head poll, finds it well. */
  readonly breaker: CircuitBreaker
  lastError: string | undefined
  requests: number
  failures: number
  /** Hedges started because it had not answered a call in time (the hedge went to another member). */
  hedges: number
}

export type SendOptions = {
  /** performance.now() by which the answer must be in (default: timeoutMs from now); past it, a 504. */
  deadline?: number
  /**
   * Transient failures (timeout, connection error, 5xx, 429, garbage, and the node errors that mean
   * "cannot answer now": nodeErrors.ts) are retried, on another member first.
   */
  retry?: boolean
  /** The answer depends on the head: members lagging the network's head are not used. */
  headSensitive?: boolean
  /**
   * The block the call is pinned to (pinnedBlock), the last of its range: members known not to have
   * it (their head below it) are asked only when no member is known to.
   */
  block?: bigint | undefined
  /**
   * The first block of the range (eth_getLogs, eth_feeHistory; default `block`): members whose
   * earliest block or state is above it are asked only when no member is known to have it all.
   */
  fromBlock?: bigint | undefined
  /** What the call needs of its blocks: their state (eth_call, eth_getBalance, ...), else the blocks themselves. */
  needsState?: boolean
  /**
   * A `null` result says that the member does not have the block (a block by number or hash):
   * another member is asked, and null is the answer only when every member asked said so.
   */
  nullIsMissing?: boolean
  /**
   * Partners follow if this pool fails: no attempt waits longer than attemptTimeoutMs, and when
   * every member answered a "cannot answer now" error, send rejects with NodeErrorAnswer instead of
   * resolving with the last one (the partners may have the data).
   */
  fallback?: boolean
  /**
   * eth_sendRawTransaction's signed transaction: resent (on another member when one is in use) after
   * a failure a node may have seen (a signed transaction cannot be applied twice), and a resend's `already known`
   * answers its hash (docs/compatibility.md §7).
   */
  rawTransaction?: string | undefined
  cancellation?: Cancellation | undefined
  /** What the client's request may hold of answers: a larger answer is refused (ResponseTooLargeError, ServerBusyError). */
  answerBudget?: AnswerBudget | undefined
  /**
   * eth_call and eth_estimateGas, whose `gas` is `ours` (none, or lowered by tollgate) or the
   * `client`'s. A node's refusal of it over its per-transaction cap (EIP-7825) is told to onGasCap,
   * and a call whose gas is ours is sent once more with `gas` at the cap; the client's own figure
   * refused is the client's answer.
   */
  capsGas?: 'ours' | 'client' | undefined
  /**
   * Written when the call ends with a node's error answer (every member asked answered one): how
   * many members answered it. Equal to the pool's members, every upstream said so.
   */
  answeredBy?: { members: number } | undefined
}

export type UpstreamPool = {
  members: readonly PoolMember[]
  /**
   * Sends one JSON-RPC body to the best member, retrying per `options`. Resolves with the answer:
   * the first one that is not a failure (judgeAttempt), else the last node error that says what is
   * missing (docs/compatibility.md §7). Rejects with UpstreamTimeoutError when the deadline passes,
   * UpstreamUnavailableError when no member could answer, NodeErrorAnswer (only with `fallback`),
   * ClientGoneError when the client went away (which is not an upstream failure), and the answer
   * budget's refusal when the answer would not fit it.
   */
  send(body: string | Buffer, options?: SendOptions): Promise<Buffer>
  /** The highest head among members in use (undefined before any is known). */
  head(): bigint | undefined
  /**
   * The head tracker's findings: a member's head from a health check it answered (it is well again),
   * or that it failed to answer one.
   */
  noteHead(member: PoolMember, head: bigint): void
  /** A member's head from its newHeads subscription: its lag, not its health (that is its HTTP endpoint's). */
  noteNotifiedHead(member: PoolMember, head: bigint): void
  noteProbeFailure(member: PoolMember, reason: string): void
  /**
   * `listener` hears of each member whose refusal (pruned state, a missing block at or below its
   * head) raised what the pool knows of its history: createHistoryProber probes it again then.
   */
  watchHistory(listener: (member: PoolMember) => void): void
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
  /** Hedging of idempotent calls (undefined: off). */
  hedge?: HedgePolicy | undefined
  now?: () => number
  timers?: Timers
  /** 0..1, for the jitter of retry pauses (Math.random unless a test fixes it). */
  random?: () => number
  /** A node refused a call's gas over this per-transaction cap (`filled`: the call had no gas of its own). */
  onGasCap?: (cap: bigint, filled: boolean) => void
}

/**
 * An idempotent call's attempt that has not answered after a delay (the quantile of that member's
 * recent latencies, within minDelayMs..maxDelayMs) gets one more attempt on the next member in use
 * that it has not tried; the first good answer wins and the other attempt is aborted. A hedge is
 * one of the call's maxAttempts; no hedge when no other member is in use.
 */
export type HedgePolicy = {
  /** 0..1: which quantile of the member's recent latencies a call waits before hedging (0.9: p90). */
  quantile: number
  minDelayMs: number
  /** Also the delay while the member has no latencies yet. */
  maxDelayMs: number
  /** How many of each member's last successful calls the quantile is taken over. */
  samples: number
}

export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
  constructor() {
    super('the client went away')
  }
}

const latencyWeight = 0.1
const errorWeight = 0.05
/** Pauses before retrying the member that just failed (the only one left), within the deadline. */
const sameMemberBackoff: BackoffPolicy = { baseMs: 25, factor: 2, maxMs: 1_000, jitter: 0.5 }
const defaultLatencySamples = 64

/**
 * A network's upstreams as one: ranks them by health (breaker, error rate, lag behind the head) and
 * config order (createMemberRanking), sends each call to the best one, retries idempotent calls on transient failures
 * within the call's deadline, hedges slow idempotent calls on another member, and keeps calls off
 * dead members with a per-member circuit breaker. Composes the failsafe/ primitives: each attempt
 * has a timeout (withTimeout), attempts race a slow one (withHedge) inside retryAfter (a pause,
 * getBackoffMs, only before the same member again), which goes on as judgeAttempt and mayRetry say;
 * each member has a CircuitBreaker.
 */
export function createUpstreamPool(upstreams: Upstream[], options: UpstreamPoolOptions): UpstreamPool {
  const now = options.now ?? (() => performance.now())
  const timers = options.timers ?? systemTimers
  const random = options.random ?? Math.random
  const { hedge } = options
  if (hedge && !(hedge.quantile >= 0 && hedge.quantile <= 1 && hedge.minDelayMs <= hedge.maxDelayMs)) {
    throw new RangeError('expected a hedge quantile within 0..1 and minDelayMs <= maxDelayMs')
  }
  const members: PoolMember[] = upstreams.map((upstream, priority) => ({
    upstream,
    priority,
    head: undefined,
    earliestState: undefined,
    earliestBlock: undefined,
    latencyMs: undefined,
    latencies: new LatencyWindow(hedge?.samples ?? defaultLatencySamples),
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
    hedges: 0,
  }))

  const ranking = createMemberRanking(members, options.maxLagBlocks)
  let historyListener: ((member: PoolMember) => void) | undefined
  const { pick, hasOther } = ranking

  function succeeded(member: PoolMember, latencyMs: number): void {
    member.requests++
    member.latencyMs =
      member.latencyMs === undefined
        ? latencyMs
        : member.latencyMs + latencyWeight * (latencyMs - member.latencyMs)
    member.latencies.add(latencyMs)
    const wasDegraded = member.errorRate > 0.5
    member.errorRate *= 1 - errorWeight
    if (member.breaker.recordSuccess() || wasDegraded !== member.errorRate > 0.5) {
      member.lastError = undefined
      ranking.invalidate()
    }
  }

  /**
   * A failure held against the member: its error rate (above one half, it goes behind the others)
   * and, unless `probe` is undefined (it answered, only not this call), its breaker. `probe`: the
   * member was open when this call picked it (calls begun before it opened are not probes).
   */
  function failed(member: PoolMember, reason: string, probe: boolean | undefined): void {
    member.requests++
    member.failures++
    member.lastError = reason
    const wasDegraded = member.errorRate > 0.5
    member.errorRate += errorWeight * (1 - member.errorRate)
    const opened = probe !== undefined && member.breaker.recordFailure(probe)
    if (opened || wasDegraded !== member.errorRate > 0.5) ranking.invalidate()
  }

  /** How long a call waits for `member` before hedging: its recent latencies' quantile, bounded. */
  function hedgeDelayMs(member: PoolMember, policy: HedgePolicy): number {
    const quantile = member.latencies.quantile(policy.quantile) ?? policy.maxDelayMs
    return Math.min(policy.maxDelayMs, Math.max(policy.minDelayMs, quantile))
  }

  /** Holds an attempt's failure against the member as much as judgeAttempt says it counts. */
  function record(member: PoolMember, failure: AttemptFailure, probe: boolean): void {
    if (failure.blame === 'none') member.requests++
    else failed(member, failure.reason, failure.blame === 'down' ? probe : undefined)
  }

  /**
   * One call through the pool: what its attempts found so far, and its steps (an object a call, its
   * steps methods on it: not a closure per step, as this is every forwarded call).
   */
  class PoolCall implements BlockPin {
    readonly retry: boolean
    readonly headSensitive: boolean
    readonly block: bigint | undefined
    readonly fromBlock: bigint | undefined
    readonly needsState: boolean
    readonly nullIsMissing: boolean
    readonly fallback: boolean
    readonly rawTransaction: string | undefined
    readonly cancellation: Cancellation | undefined
    readonly answerBudget: AnswerBudget | undefined
    readonly capsGas: 'ours' | 'client' | undefined
    readonly answeredBy: { members: number } | undefined
    /** Sent once more with its gas at a node's cap: not again. */
    gasCapped = false
    readonly deadline: number
    readonly maxAttempts: number
    /** Idempotent reads only are hedged: not a transaction's send (resent only after a failure), not filters. */
    readonly hedgePolicy: HedgePolicy | undefined
    /** Attempts started, hedges included. */
    started = 0
    /** Members asked already (a few at most: a list is cheaper than a set). */
    tried: PoolMember[] | undefined
    failures: string[] | undefined
    /** An attempt given the rest of the deadline timed out: the deadline is past, known without a clock read. */
    deadlinePassed = false
    /** The last node error that says what is missing, for the client if nothing better comes. */
    nodeAnswer: Buffer | undefined
    /** Members whose node answered for itself: asking again would get the same answer. */
    answered: Set<PoolMember> | undefined
    /** A node may have seen this call already (it failed after it was sent). */
    seen = false
    /** The member the next retry goes to, picked when its pause is decided. */
    next: PoolMember | undefined

    constructor(
      public body: string | Buffer,
      sendOptions: SendOptions,
    ) {
      this.retry = sendOptions.retry ?? false
      this.headSensitive = sendOptions.headSensitive ?? false
      this.block = sendOptions.block
      this.fromBlock = sendOptions.fromBlock ?? sendOptions.block
      this.needsState = sendOptions.needsState ?? false
      this.nullIsMissing = sendOptions.nullIsMissing ?? false
      this.fallback = sendOptions.fallback ?? false
      this.rawTransaction = sendOptions.rawTransaction
      this.cancellation = sendOptions.cancellation
      this.answerBudget = sendOptions.answerBudget
      this.capsGas = sendOptions.capsGas
      this.answeredBy = sendOptions.answeredBy
      this.deadline = sendOptions.deadline ?? now() + options.timeoutMs
      this.maxAttempts = this.retry || this.rawTransaction !== undefined ? options.maxAttempts : 1
      this.hedgePolicy = this.retry && this.rawTransaction === undefined ? hedge : undefined
    }

    /**
     * The first try, then its answer: one step after the attempt, not an async layer of its own (this
     * is every forwarded call). Where it answers (nearly always), no retry machinery is made.
     */
    run(): Promise<Buffer> {
      const first = this.deadline - now() > 0 ? this.pickNext() : undefined
      if (!first) return this.retried(undefined)
      return this.tryOn(first).then((step) =>
        this.retryable(step) ? this.retried(step) : this.answerOf(step),
      )
    }

    /** Retries after a first step that may be retried (or none could be tried): the call's answer. */
    async retried(first: Step | undefined): Promise<Buffer> {
      const step =
        first &&
        (await retryAfter(first, () => this.tryNext(), {
          retryable: (each) => this.retryable(each),
          // the same member again (it is the only one left): a pause first
          pauseMs: () => {
            this.next = this.pickNext()
            return this.next && this.tried?.includes(this.next)
              ? getBackoffMs(this.started, sameMemberBackoff, random)
              : 0
          },
          deadline: this.deadline,
          now,
          timers,
        }))
      return step ? this.answerOf(step) : this.failure()
    }

    /** What the call resolves with once its last step is in: the answer, or the failure's error. */
    answerOf(last: Step): Buffer | Promise<Buffer> {
      const { verdict } = last
      if ('answer' in verdict) {
        if (verdict.gasCap !== undefined && this.capsGas !== undefined && !this.gasCapped) {
          const capped = this.underGasCap(verdict.gasCap, last.member)
          if (capped) return capped
        }
        const { rawTransaction } = this
        if (rawTransaction === undefined || !this.seen) return verdict.answer
        return answerResentTransaction(verdict.answer, rawTransaction, async (lookUp) => {
          const timeoutMs = Math.max(1, this.deadline - now())
          const found = await attemptUpstream(last.member.upstream, lookUp, timeoutMs, {
            cancellation: this.cancellation,
            timers,
          })
          return 'answer' in found ? found.answer : undefined
        })
      }
      if (verdict.clientGone) throw new ClientGoneError()
      if (verdict.refusal) throw verdict.refusal
      return this.failure()
    }

    /**
     * The call once more on `member`, its gas at the cap the node named, when the gas it refused was
     * not the client's (the node's own default, or tollgate's lowered figure); undefined when it was
     * the client's own (the refusal is the answer, the cap told). A cap not below the gas the call
     * carried is not one this call met: neither told nor used.
     */
    underGasCap(cap: bigint, member: PoolMember): Promise<Buffer> | undefined {
      this.gasCapped = true
      const capped = toGasCappedBody(this.body, cap)
      if (!capped) return undefined
      options.onGasCap?.(cap, capped.filled)
      if (this.capsGas === 'client') return undefined
      this.body = capped.body
      return this.tryOn(member).then((step) =>
        this.retryable(step) ? this.retried(step) : this.answerOf(step),
      )
    }

    failure(): Buffer {
      const logDetails = this.failures ? this.failures.join('; ') : 'every upstream is failing'
      if (this.nodeAnswer) {
        if (this.answeredBy) this.answeredBy.members = this.answered?.size ?? 0
        if (this.fallback) throw new NodeErrorAnswer(this.nodeAnswer, logDetails)
        return this.nodeAnswer
      }
      if (this.deadlinePassed || this.deadline - now() <= 1) throw new UpstreamTimeoutError({ logDetails })
      throw new UpstreamUnavailableError({ logDetails })
    }

    /** Calls that are not idempotent move on only when the failed attempt never reached the node. */
    pickNext(): PoolMember | undefined {
      return pick(this.headSensitive, this.tried, this.started >= this.maxAttempts, this.answered, this)
    }

    tryNext(): Promise<Step> | undefined {
      const member = this.next ?? this.pickNext()
      this.next = undefined
      return member && this.tryOn(member)
    }

    retryable({ verdict }: Step): boolean {
      return (
        !('answer' in verdict) && !this.deadlinePassed && mayRetry(verdict, this.started < this.maxAttempts)
      )
    }

    /** One try: on `member`, raced against a hedge where one could go (no timer where none could). */
    tryOn(member: PoolMember): Promise<Step> {
      const { hedgePolicy } = this
      if (
        !(
          hedgePolicy &&
          this.started + 1 < this.maxAttempts &&
          hasOther(this.headSensitive, member, this.tried, this)
        )
      ) {
        return this.attempt(member, undefined)
      }
      return withHedge<Step>(
        (index, superseded) =>
          index === 0 ? this.attempt(member, superseded) : this.hedgeAttempt(superseded),
        {
          delayMs: hedgeDelayMs(member, hedgePolicy),
          maxHedges: 1,
          // a budget's refusal is not: the other attempt's bytes may be what filled it
          isFinal: ({ verdict }) => 'answer' in verdict || verdict.clientGone === true,
          onHedge: () => member.hedges++,
          timers,
        },
      )
    }

    /** A hedge: one more attempt, on the best member in use not asked yet, if any and if allowed. */
    hedgeAttempt(superseded: Cancellation): Promise<Step> | undefined {
      if (this.started >= this.maxAttempts || this.deadline - now() <= 0) return undefined
      const member = pick(this.headSensitive, this.tried, true, undefined, this)
      return member && this.attempt(member, superseded)
    }

    /** One attempt on `member`; its outcome is held for or against the member as soon as it is in. */
    attempt(member: PoolMember, superseded: Cancellation | undefined): Promise<Step> {
      const index = this.started++
      const began = now()
      const remaining = this.deadline - began
      // one attempt waits at most attemptTimeoutMs while something else could still answer in time:
      // another member, or (`fallback`) the partners; the last one may use the rest of the deadline
      const { fallback } = this
      const bounded =
        index + 1 < this.maxAttempts && (fallback || hasOther(this.headSensitive, member, this.tried, this))
      // whole milliseconds: Node keeps one timer list per duration, and most attempts then share one
      const timeoutMs = Math.ceil(
        bounded || fallback ? Math.min(remaining, options.attemptTimeoutMs) : remaining,
      )
      const probe = member.breaker.state === 'open'
      // a list of one at first (an empty one would be given room for 16)
      if (this.tried) this.tried.push(member)
      else this.tried = [member]
      const stops = { cancellation: this.cancellation, superseded, timers, budget: this.answerBudget }
      return attemptUpstream(member.upstream, this.body, timeoutMs, stops, (judged): Step => {
        const verdict = this.nullIsMissing && 'answer' in judged ? this.unlessNull(judged.answer) : judged
        if ('answer' in verdict) succeeded(member, now() - began)
        else if (!verdict.clientGone) this.failed(member, verdict, probe, timeoutMs >= remaining)
        return { member, verdict }
      })
    }

    /**
     * A `null` result where the call says null means "not here" (nullIsMissing): the member's answer
     * for itself, kept for the client in case every member says so, but not yet the answer.
     */
    unlessNull(answer: Buffer): Verdict {
      if (!isNullResult(answer)) return { answer }
      this.answerBudget?.giveBack(answer.length)
      return { reason: 'null: it does not have the block', blame: 'none', nodeAnswer: answer }
    }

    /** An attempt's failure, for the member and for the call (`lastChance`: it had the rest of the deadline). */
    failed(member: PoolMember, verdict: AttemptFailure, probe: boolean, lastChance: boolean): void {
      record(member, verdict, probe)
      if (verdict.superseded) return
      this.failures ??= []
      this.failures.push(`${member.upstream.label}: ${verdict.reason}`)
      if (verdict.nodeAnswer) {
        this.nodeAnswer = verdict.nodeAnswer
        this.answered ??= new Set()
        this.answered.add(member)
        // a node without the data for a block at or below its head: what it keeps starts above it
        if (verdict.blame === 'degraded' && this.block !== undefined) {
          const missing = missingOf(verdict.missingBlock, this.fromBlock ?? this.block, this.block)
          if (learnMissing(member, missing, this.block, this.needsState)) historyListener?.(member)
        }
      }
      if (!verdict.unsent) this.seen = true
      if (verdict.timedOut === true && lastChance) this.deadlinePassed = true
    }
  }

  return {
    members,
    send: (body, sendOptions = {}) => new PoolCall(body, sendOptions).run(),
    head: ranking.head,
    noteHead(member, head) {
      if (member.head !== head) ranking.invalidate()
      member.head = head
      // a node that answers its health check is well: back in use, failures forgotten
      if (member.breaker.state === 'open' || member.lastError !== undefined) {
        member.breaker.close()
        member.lastError = undefined
        ranking.invalidate()
      }
      // and its error rate decays as if a call had succeeded: a member put behind the others gets
      // no calls, so without this it could never come back to the front
      const wasDegraded = member.errorRate > 0.5
      member.errorRate *= 1 - errorWeight
      if (wasDegraded !== member.errorRate > 0.5) ranking.invalidate()
    },
    noteNotifiedHead(member, head) {
      if (member.head === head) return
      member.head = head
      ranking.invalidate()
    },
    noteProbeFailure(member, reason) {
      member.lastError = reason
      if (member.breaker.trip()) ranking.invalidate()
    },
    watchHistory(listener) {
      historyListener = listener
    },
    isReachable: () => members.some((member) => member.breaker.state === 'closed'),
    close: async () => {
      await Promise.all(members.map((member) => member.upstream.close()))
    },
  }
}

/**
 * The block of `from`..`to` a member's refusal says it lacks: the one its error names (`named`),
 * where that is in the range; else the first (a node whose history starts above it lacks that one
 * whatever else it has).
 */
function missingOf(named: bigint | undefined, from: bigint, to: bigint): bigint {
  return named !== undefined && named >= from && named <= to ? named : from
}

/**
 * A member refused blocks up to `to`, at or below its head, for want of `missing` (pruned state or
 * history): the earliest block (or state) it serves is above that block, remembered until its next
 * probe (createHistoryProber, which probes it again at once) says otherwise. A range ending above
 * its head says it lags, not what it keeps. Whether anything was learned.
 */
function learnMissing(member: PoolMember, missing: bigint, to: bigint, needsState: boolean): boolean {
  if (member.head === undefined || to > member.head) return false
  const earliest = needsState ? member.earliestState : member.earliestBlock
  if (earliest !== undefined && earliest > missing) return false
  if (needsState) member.earliestState = missing + 1n
  else member.earliestBlock = missing + 1n
  return true
}

/** The longest answer read for a null result: `{"jsonrpc":"2.0","id":…,"result":null}` with a long id. */
const maxNullAnswerBytes = 1024

/** Whether an answer's result is `null` (cheap for everything else: length, then a search, then a parse). */
function isNullResult(answer: Buffer): boolean {
  if (answer.length > maxNullAnswerBytes || answer.indexOf('null') === -1) return false
  try {
    const parsed = JSON.parse(answer.toString()) as { result?: unknown; error?: unknown }
    return (
      parsed !== null && typeof parsed === 'object' && parsed.result === null && parsed.error === undefined
    )
  } catch {
    return false
  }
}

/** One attempt's member and verdict. */
type Step = { member: PoolMember; verdict: Verdict }
