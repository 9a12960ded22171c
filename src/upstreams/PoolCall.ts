import type { Buffer } from 'node:buffer'
import { ClientGoneError, NodeErrorAnswer } from '../errors/callEndings.ts'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/upstreamErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { type BackoffPolicy, getBackoffMs } from '../failsafe/getBackoffMs.ts'
import { retryAfter } from '../failsafe/retryAfter.ts'
import type { Timers } from '../failsafe/Timers.ts'
import { withHedge } from '../failsafe/withHedge.ts'
import type { AnswerBudget } from './AnswerBudget.ts'
import type { AttemptOutcome } from './AttemptDurations.ts'
import { answerResentTransaction } from './answerResentTransaction.ts'
import { attemptUpstream } from './attemptUpstream.ts'
import type { BlockPin, MemberRanking } from './createMemberRanking.ts'
import { isNullResult } from './isNullResult.ts'
import { type AttemptFailure, judgeTimeoutAtNode, mayRetry, type Verdict } from './judgeAttempt.ts'
import type { PoolMember } from './PoolMember.ts'
import type { RawTransaction, SendOptions } from './SendOptions.ts'
import { toGasCappedBody } from './toGasCappedBody.ts'

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

/** What a pool's calls share: its settings, clock and ranking (createUpstreamPool). */
export type PoolCallContext = {
  /** A call's deadline when the caller gives none. */
  readonly timeoutMs: number
  /** Longest wait for one member when another could still be tried. */
  readonly attemptTimeoutMs: number
  /** Attempts per call, the first included (idempotent calls only; others get one). */
  readonly maxAttempts: number
  readonly hedge: HedgePolicy | undefined
  readonly now: () => number
  readonly timers: Timers
  /** 0..1, for the jitter of retry pauses. */
  readonly random: () => number
  readonly ranking: MemberRanking
  /** The pool's members: a call no member took says why each was out of use (its last error). */
  readonly members: readonly PoolMember[]
  readonly onGasCap: ((cap: bigint, filled: boolean) => void) | undefined
  /** A member's refusal raised what is known of its history (createHistoryProber probes it again). */
  readonly onHistory: (member: PoolMember) => void
}

/** Pauses before retrying the member that just failed (the only one left), within the deadline. */
const sameMemberBackoff: BackoffPolicy = { baseMs: 25, factor: 2, maxMs: 1_000, jitter: 0.5 }

/**
 * One call through a pool, the one place that decides where it goes next between the pool's
 * members: what its attempts found so far, and its steps (an object a call, its steps methods on
 * it: not a closure per step, as this is every forwarded call). Composes the failsafe/ primitives:
 * each attempt has a timeout (attemptUpstream's withTimeout), attempts race a slow one (withHedge)
 * inside retryAfter (a pause, getBackoffMs, only before the same member again), which goes on as
 * judgeAttempt and mayRetry say; each outcome is recorded on its member (PoolMember), whose breaker
 * and error rate rank it (createMemberRanking). Whether the partners follow is mayFailOver's.
 */
export class PoolCall implements BlockPin {
  readonly retry: boolean
  readonly headSensitive: boolean
  readonly block: bigint | undefined
  readonly fromBlock: bigint | undefined
  readonly needsState: boolean
  readonly nullIsMissing: boolean
  readonly fallback: boolean
  readonly rawTransaction: SendOptions['rawTransaction']
  readonly cancellation: Cancellation | undefined
  readonly answerBudget: AnswerBudget | undefined
  readonly capsGas: 'ours' | 'client' | undefined
  readonly answeredBy: { members: number } | undefined
  readonly trail: SendOptions['trail']
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
  /** Members not to ask again: those that answered for themselves, or had the request until its time ran out. */
  notAgain: Set<PoolMember> | undefined
  /** A node worked on the call until its time there ran out, answering others meanwhile: slow by its nature. */
  worked = false
  /** A node may have seen this call already (it failed after it was sent). */
  seen = false
  /** The member the next retry goes to, picked when its pause is decided. */
  next: PoolMember | undefined

  constructor(
    readonly pool: PoolCallContext,
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
    this.trail = sendOptions.trail
    this.deadline = sendOptions.deadline ?? this.pool.now() + this.pool.timeoutMs
    this.maxAttempts = this.retry || this.rawTransaction !== undefined ? this.pool.maxAttempts : 1
    this.hedgePolicy = this.retry && this.rawTransaction === undefined ? this.pool.hedge : undefined
  }

  /**
   * The call's answer: its first try and, while they may help, its retries; then what the last step
   * says. An answer is the node's as it came, unless the node named a gas cap the call goes once more
   * under (capGas), or it answers a transaction a node may have seen already (resentAnswer).
   */
  async run(): Promise<Buffer> {
    const first = this.deadline - this.pool.now() > 0 ? this.pickNext() : undefined
    let step = first && (await this.tryOn(first))
    for (;;) {
      if (step && this.retryable(step)) step = await this.retried(step)
      if (!step) return this.failure()
      const { verdict, member } = step
      if (!('answer' in verdict)) {
        if (verdict.clientGone) throw new ClientGoneError()
        if (verdict.refusal) throw verdict.refusal
        return this.failure()
      }
      if (verdict.gasCap !== undefined && this.capGas(verdict.gasCap)) {
        step = await this.tryOn(member)
        continue
      }
      const { rawTransaction } = this
      if (rawTransaction && this.seen) return await this.resentAnswer(verdict.answer, rawTransaction, member)
      return verdict.answer
    }
  }

  /** Retries after a step that may be retried, within the deadline: the last step. */
  retried(first: Step): Promise<Step> {
    return retryAfter(first, () => this.tryNext(), {
      retryable: (each) => this.retryable(each),
      // the same member again (it is the only one left): a pause first
      pauseMs: () => {
        this.next = this.pickNext()
        return this.next && this.tried?.includes(this.next)
          ? getBackoffMs(this.started, sameMemberBackoff, this.pool.random)
          : 0
      },
      deadline: this.deadline,
      now: this.pool.now,
      timers: this.pool.timers,
    })
  }

  /**
   * The call's gas put at the cap a node named, and whether it goes once more so: once, for a call
   * that caps gas, when the gas it refused was not the client's (the node's own default, or
   * tollgate's lowered figure); when it was the client's own, the refusal is the answer (the cap
   * told). A cap not below the gas the call carried is not one this call met: neither told nor used.
   */
  capGas(cap: bigint): boolean {
    if (this.capsGas === undefined || this.gasCapped) return false
    this.gasCapped = true
    const capped = toGasCappedBody(this.body, cap)
    if (!capped) return false
    this.pool.onGasCap?.(cap, capped.filled)
    if (this.capsGas === 'client') return false
    this.body = capped.body
    return true
  }

  /** A transaction's answer after a node may have seen it already: looked up (answerResentTransaction). */
  resentAnswer(answer: Buffer, transaction: RawTransaction, member: PoolMember): Promise<Buffer> {
    return answerResentTransaction(answer, transaction, async (lookUp) => {
      const timeoutMs = Math.max(1, this.deadline - this.pool.now())
      const found = await attemptUpstream(member.upstream, lookUp, timeoutMs, {
        cancellation: this.cancellation,
        timers: this.pool.timers,
      })
      return 'answer' in found ? found.answer : undefined
    })
  }

  failure(): Buffer {
    const logDetails = this.failures ? this.failures.join('; ') : outOfUse(this.pool.members)
    if (this.nodeAnswer) {
      if (this.answeredBy) this.answeredBy.members = this.answered?.size ?? 0
      if (this.fallback) throw new NodeErrorAnswer(this.nodeAnswer, logDetails)
      return this.nodeAnswer
    }
    // a call slow by its nature is a timeout its key pays for, whatever came after
    if (this.worked) throw new UpstreamTimeoutError({ logDetails }, true)
    if (this.deadlinePassed || this.deadline - this.pool.now() <= 1)
      throw new UpstreamTimeoutError({ logDetails })
    throw new UpstreamUnavailableError({ logDetails })
  }

  /** Calls that are not idempotent move on only when the failed attempt never reached the node. */
  pickNext(): PoolMember | undefined {
    return this.pool.ranking.pick(
      this.headSensitive,
      this.tried,
      this.started >= this.maxAttempts,
      this.notAgain,
      this,
    )
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
        this.pool.ranking.hasOther(this.headSensitive, member, this.tried, this)
      )
    ) {
      return this.attempt(member, undefined)
    }
    return withHedge<Step>(
      (index, superseded) => (index === 0 ? this.attempt(member, superseded) : this.hedgeAttempt(superseded)),
      {
        delayMs: hedgeDelayMs(member, hedgePolicy),
        maxHedges: 1,
        // a budget's refusal is not: the other attempt's bytes may be what filled it
        isFinal: ({ verdict }) => 'answer' in verdict || verdict.clientGone === true,
        onHedge: () => member.recordHedge(),
        timers: this.pool.timers,
      },
    )
  }

  /** A hedge: one more attempt, on the best member in use not asked yet, if any and if allowed. */
  hedgeAttempt(superseded: Cancellation): Promise<Step> | undefined {
    if (this.started >= this.maxAttempts || this.deadline - this.pool.now() <= 0) return undefined
    const member = this.pool.ranking.pick(this.headSensitive, this.tried, true, undefined, this)
    return member && this.attempt(member, superseded, true)
  }

  /** One attempt on `member`; its outcome is held for or against the member as soon as it is in. */
  attempt(member: PoolMember, superseded: Cancellation | undefined, hedge = false): Promise<Step> {
    const index = this.started++
    const began = this.pool.now()
    const remaining = this.deadline - began
    // one attempt waits at most attemptTimeoutMs while something else could still answer in time:
    // another member, or (`fallback`) the partners; the last one may use the rest of the deadline
    const { fallback } = this
    const bounded =
      index + 1 < this.maxAttempts &&
      (fallback || this.pool.ranking.hasOther(this.headSensitive, member, this.tried, this))
    // whole milliseconds: Node keeps one timer list per duration, and most attempts then share one
    const timeoutMs = Math.ceil(
      bounded || fallback ? Math.min(remaining, this.pool.attemptTimeoutMs) : remaining,
    )
    const probe = !member.isInUse()
    // a list of one at first (an empty one would be given room for 16)
    if (this.tried) this.tried.push(member)
    else this.tried = [member]
    const begun = this.trail?.begin(member, hedge)
    const stops = {
      cancellation: this.cancellation,
      superseded,
      timers: this.pool.timers,
      budget: this.answerBudget,
      traceHeaders: begun?.traceHeaders,
    }
    return attemptUpstream(member.upstream, this.body, timeoutMs, stops, (judged): Step => {
      const tookMs = this.pool.now() - began
      member.recordAttempt(tookMs, outcomeOf(judged))
      const verdict = this.verdictOf(member, judged, began)
      if (begun) this.trail?.end(begun.attempt, verdict)
      if ('answer' in verdict) member.recordSuccess(tookMs)
      else if (!verdict.clientGone) this.failed(member, verdict, probe, timeoutMs >= remaining)
      return { member, verdict }
    })
  }

  /**
   * What an attempt that began at `began` means for this call: a timeout at the node judged by what
   * else it answered meanwhile (judgeTimeoutAtNode), a null result by nullIsMissing; the node's
   * answers noted on its member, as what it did meanwhile for other calls.
   */
  verdictOf(member: PoolMember, judged: Verdict, began: number): Verdict {
    if ('answer' in judged || judged.nodeAnswer) member.noteAnswered(began)
    if ('answer' in judged) return this.nullIsMissing ? this.unlessNull(judged.answer) : judged
    return judged.atNode ? judgeTimeoutAtNode(judged, member.answeredSince(began)) : judged
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
    if (verdict.blame === 'none') member.recordRequest()
    else if (verdict.blame === 'silent') member.recordSilence(verdict.reason, probe)
    else member.recordFailure(verdict.reason, verdict.blame, probe)
    if (verdict.superseded) return
    this.failures ??= []
    this.failures.push(`${member.upstream.label}: ${verdict.reason}`)
    // a node that had the request until its time ran out is not sent it again: it may still be at it
    if (verdict.atNode) {
      this.notAgain = (this.notAgain ?? new Set()).add(member)
      if (verdict.worked) this.worked = true
    }
    if (verdict.nodeAnswer) {
      this.nodeAnswer = verdict.nodeAnswer
      this.answered ??= new Set()
      this.answered.add(member)
      this.notAgain = (this.notAgain ?? new Set()).add(member)
      // a node without the data for a block at or below its head: what it keeps starts above it
      if (verdict.blame === 'degraded' && this.block !== undefined) {
        const missing = missingOf(verdict.missingBlock, this.fromBlock ?? this.block, this.block)
        if (member.learnMissing(missing, this.block, this.needsState)) this.pool.onHistory(member)
      }
    }
    if (!verdict.unsent) this.seen = true
    if (verdict.timedOut === true && lastChance) this.deadlinePassed = true
  }
}

/** How long a call waits for `member` before hedging: its recent latencies' quantile, bounded. */
function hedgeDelayMs(member: PoolMember, policy: HedgePolicy): number {
  const quantile = member.latencyQuantile(policy.quantile) ?? policy.maxDelayMs
  return Math.min(policy.maxDelayMs, Math.max(policy.minDelayMs, quantile))
}

/**
 * The block of `from`..`to` a member's refusal says it lacks: the one its error names (`named`),
 * where that is in the range; else the first (a node whose history starts above it lacks that one
 * whatever else it has).
 */
function missingOf(named: bigint | undefined, from: bigint, to: bigint): bigint {
  return named !== undefined && named >= from && named <= to ? named : from
}

/** One attempt's member and verdict. */
type Step = { member: PoolMember; verdict: Verdict }

/** How an attempt ended, for its member's attempt durations. */
function outcomeOf(verdict: Verdict): AttemptOutcome {
  if ('answer' in verdict) return 'ok'
  if (verdict.timedOut) return 'timeout'
  if (verdict.superseded || verdict.clientGone) return 'cancelled'
  return 'error'
}

/**
 * Why a call went to no member: each out of use with its last error (a failed call's, or health
 * check's), or in use but not for this call (behind the head, or without its block).
 */
function outOfUse(members: readonly PoolMember[]): string {
  const reasons = members.map((member) => {
    const why = member.isInUse() ? 'not for this call' : (member.lastError ?? 'out of use')
    return `${member.upstream.label}: ${why}`
  })
  return `no upstream took the call (${reasons.join('; ')})`
}
