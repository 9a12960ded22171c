import type { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { attemptUpstream } from './attemptUpstream.ts'
import { latestBlockBody } from './createHealthProber.ts'
import { createMemberRanking } from './createMemberRanking.ts'
import type { Upstream } from './createUpstream.ts'
import { type HedgePolicy, PoolCall, type PoolCallContext } from './PoolCall.ts'
import { PoolMember } from './PoolMember.ts'
import type { SendOptions } from './SendOptions.ts'

export type UpstreamPool = {
  /**
   * Its members, which own their health: the head tracker's health checks and the history prober
   * write it through their methods; readers outside upstreams/ take them as MemberView.
   */
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
  /**
   * The highest head among members in use (undefined before any is known): what the head tracker
   * weighs its members by. Every other reader takes the network's head (Network.head).
   */
  membersHead(): bigint | undefined
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

const defaultLatencySamples = 64

/**
 * A network's upstreams as one: ranks its members (PoolMember, which own their health) by health
 * (breaker, error rate, lag behind the head) and config order (createMemberRanking), and sends each
 * call (a PoolCall) to the best one, retrying idempotent calls on transient failures within the
 * call's deadline, hedging slow idempotent calls on another member, keeping calls off dead members
 * with each member's circuit breaker.
 */
export function createUpstreamPool(upstreams: Upstream[], options: UpstreamPoolOptions): UpstreamPool {
  const now = options.now ?? (() => performance.now())
  const { hedge } = options
  if (hedge && !(hedge.quantile >= 0 && hedge.quantile <= 1 && hedge.minDelayMs <= hedge.maxDelayMs)) {
    throw new RangeError('expected a hedge quantile within 0..1 and minDelayMs <= maxDelayMs')
  }
  let historyListener: ((member: PoolMember) => void) | undefined
  const timers = options.timers ?? systemTimers
  const memberOptions = {
    breaker: {
      failures: options.breakerFailures,
      cooldownMs: options.breakerCooldownMs,
      maxCooldownMs: options.breakerMaxCooldownMs,
      now,
    },
    latencySamples: hedge?.samples ?? defaultLatencySamples,
    onChange: () => ranking.invalidate(),
    // a health check's question, as long as an attempt may wait for a member: a node that answers
    // nothing within it is down
    checkLiveness: (member: PoolMember) =>
      attemptUpstream(member.upstream, latestBlockBody, options.attemptTimeoutMs, { timers }).then(
        (verdict) => 'answer' in verdict,
        // a request that could not even start (the pool closing) answers nothing
        () => false,
      ),
  }
  const members = upstreams.map((upstream, priority) => new PoolMember(upstream, priority, memberOptions))
  const ranking = createMemberRanking(members, options.maxLagBlocks)
  const context: PoolCallContext = {
    timeoutMs: options.timeoutMs,
    attemptTimeoutMs: options.attemptTimeoutMs,
    maxAttempts: options.maxAttempts,
    hedge,
    now,
    timers,
    random: options.random ?? Math.random,
    ranking,
    members,
    onGasCap: options.onGasCap,
    onHistory: (member) => historyListener?.(member),
  }

  /**
   * The context a call runs in: the pool's, but for a call whose node waits for a receipt
   * (eth_sendRawTransactionSync), whose attempts are each given that wait beyond attemptTimeoutMs:
   * a node still waiting is not a slow one, and a resend elsewhere would not answer sooner.
   */
  const contextOf = (sendOptions: SendOptions): PoolCallContext => {
    const waitMs = sendOptions.rawTransaction?.receiptWaitMs
    return waitMs ? { ...context, attemptTimeoutMs: context.attemptTimeoutMs + waitMs } : context
  }

  return {
    members,
    send: (body, sendOptions = {}) => new PoolCall(contextOf(sendOptions), body, sendOptions).run(),
    membersHead: ranking.head,
    watchHistory(listener) {
      historyListener = listener
    },
    isReachable: () => members.some((member) => member.isInUse()),
    close: async () => {
      await Promise.all(members.map((member) => member.upstream.close()))
    },
  }
}
