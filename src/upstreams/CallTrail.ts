import type { TraceHeaders } from './createUpstream.ts'
import type { Verdict } from './judgeAttempt.ts'
import type { PoolMember } from './PoolMember.ts'

/**
 * How one attempt ended, in words that say nothing of the node's address or its error text:
 * answered (`ok`, a node's error answer included when it was the client's answer), no answer in time,
 * an error answer another node may not have (`node-error`), any other failure (a connection error, an
 * HTTP error, garbage: `error`), a hedge's loser (`superseded`), the client gone (`cancelled`) or the
 * answer refused by the client's budget (`refused`).
 */
export type TrailOutcome = 'ok' | 'timeout' | 'node-error' | 'error' | 'superseded' | 'cancelled' | 'refused'

/** One attempt of a call on one upstream (or partner). */
export type Attempt = {
  /** The upstream's configured name, else `#N` (its place in the network's list): never its URL. */
  readonly upstream: string
  /** A partner's member: the call had failed over. */
  readonly partner: boolean
  /** A hedge: started while another attempt of the call was still waiting. */
  readonly hedge: boolean
  /** Undefined while it runs. */
  outcome: TrailOutcome | undefined
  /** The tracer's own (its span); nothing else reads it. */
  span: unknown
}

/** Where the call's answer came from, as far as the cache goes: kept, loaded, or another call's load joined. */
export type CacheUse = 'hit' | 'miss' | 'joined'

/** What a tracer does with a trail (src/tracing/); a trail without one only records. */
export type TrailSpans = {
  /** An attempt begins: the trace context its request carries to the node. */
  started(attempt: Attempt): TraceHeaders
  /** It ended: its outcome is set. */
  ended(attempt: Attempt): void
  /** The cache was asked. */
  cached(use: CacheUse): void
}

/**
 * What happened on one call, recorded only when someone reads it (the route header, a trace):
 * each upstream attempt with its upstream's name and outcome (retries, hedges and partners in the
 * order they started), and the cache's part. Made per call by the pipeline and handed down in
 * SendOptions; the pool's attempts write to it.
 */
export class CallTrail {
  readonly attempts: Attempt[] = []
  #cache: CacheUse | undefined
  /** Attempts from now on are the partners'. */
  #partners = false

  constructor(readonly spans: TrailSpans | undefined) {}

  /** Undefined when the call did not go through the cache (not cacheable, or no cache). */
  get cache(): CacheUse | undefined {
    return this.#cache
  }

  /** The network's upstreams failed the call: the attempts from now on are its partners' (sendWithPartners). */
  toPartners(): void {
    this.#partners = true
  }

  /**
   * An attempt begins on `member`: the trace context to send with it when traced (never to a
   * partner: only the JSON-RPC body goes to them, docs/compatibility.md §7).
   */
  begin(member: PoolMember, hedge: boolean): { attempt: Attempt; traceHeaders: TraceHeaders | undefined } {
    const attempt: Attempt = {
      upstream: member.trailName,
      partner: this.#partners,
      hedge,
      outcome: undefined,
      span: undefined,
    }
    this.attempts.push(attempt)
    const traceHeaders = this.spans?.started(attempt)
    return { attempt, traceHeaders: this.#partners ? undefined : traceHeaders }
  }

  end(attempt: Attempt, verdict: Verdict): void {
    attempt.outcome = outcomeOf(verdict)
    this.spans?.ended(attempt)
  }

  usedCache(use: CacheUse): void {
    this.#cache = use
    this.spans?.cached(use)
  }

  /**
   * The attempt that gave the answer: the last one that answered, else the last node error answer
   * (every node asked said it cannot answer: the last one's word is the answer).
   */
  answeredBy(): Attempt | undefined {
    let nodeError: Attempt | undefined
    for (let index = this.attempts.length - 1; index >= 0; index--) {
      const attempt = this.attempts[index] as Attempt
      if (attempt.outcome === 'ok') return attempt
      if (attempt.outcome === 'node-error') nodeError ??= attempt
    }
    return nodeError
  }
}

function outcomeOf(verdict: Verdict): TrailOutcome {
  if ('answer' in verdict) return 'ok'
  if (verdict.superseded) return 'superseded'
  if (verdict.clientGone) return 'cancelled'
  if (verdict.refusal) return 'refused'
  if (verdict.timedOut) return 'timeout'
  return verdict.nodeAnswer ? 'node-error' : 'error'
}
