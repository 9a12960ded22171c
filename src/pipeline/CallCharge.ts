import { performance } from 'node:perf_hooks'
import { ClientGoneError } from '../errors/callEndings.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import type { RequestCredits } from './RequestCredits.ts'

/** What splitLogsRange needs of a call's charge: the next chunk held, and the node calls it charges. */
export type ChunkCharge = Pick<CallCharge, 'paysInTime' | 'holdNext' | 'chargeCall' | 'freeCall'>

/**
 * What one call of a split eth_getLogs is charged for, in node calls at its method's price
 * (priceOf's `splitCalls`): the refusal that started the split (a node's answer), and each chunk, the
 * first of a split decided at once held with the request, every other held against the key (its
 * balances and per-second rates) before it is sent. A key's split work is so held to what it pays,
 * chunk by chunk. A call never split charges none here: its own price rules apply.
 */
export class CallCharge implements ChunkCharge {
  splitCalls = 0

  constructor(
    private readonly credits: RequestCredits,
    private readonly costCredits: number,
    private readonly timers: Timers = systemTimers,
    private readonly now: () => number = performanceNow,
  ) {}

  /**
   * Whether the key's per-second rate could pay for `calls` more node calls before `deadline`
   * (performance.now()), from a full second's worth: a split it could not is not begun. An estimate
   * that errs on the hopeful side: what else the key spends meanwhile is not known.
   */
  paysInTime(calls: number, deadline: number): boolean {
    const ratePerSecond = this.credits.creditsPerSecond()
    const neededMs = ((calls * this.costCredits - ratePerSecond) / ratePerSecond) * 1000
    return this.now() + neededMs < deadline
  }

  /**
   * Holds one more node call's price. When only the key's per-second rate refuses it, waits until the
   * rate pays for it, if that comes before `deadline` (performance.now()); rejects with the 402 or
   * 429 that refuses it otherwise, and with ClientGoneError when `cancellation` is set meanwhile (the
   * client left, or the split ended). False
   * when the request was settled meanwhile: the call is over, nothing more is sent for it.
   */
  async holdNext(deadline: number, cancellation: Cancellation | undefined): Promise<boolean> {
    for (;;) {
      try {
        return await this.credits.hold(this.costCredits)
      } catch (err) {
        // a daily limit's wait (until 00:00 UTC) never fits before a call's deadline
        if (!(err instanceof RateLimitError) || this.now() + err.retryAfterMs >= deadline) throw err
        await wait(Math.max(1, err.retryAfterMs), cancellation, this.timers)
      }
    }
  }

  /** A node call of the split is charged: the refusal that started it, or a chunk sent. */
  chargeCall(): void {
    this.splitCalls++
  }

  /** A chunk charged failed without a node's answer, upstream or here: free, as any such call. */
  freeCall(): void {
    this.splitCalls--
  }
}

/** The clock a call's charge reads: one function for every call (a default made in place would be one a call). */
function performanceNow(): number {
  return performance.now()
}

/** Resolves after `ms`; rejects with ClientGoneError as soon as the client leaves. */
function wait(ms: number, cancellation: Cancellation | undefined, timers: Timers): Promise<void> {
  return new Promise((resolve, reject) => {
    const handle = timers.setTimeout(() => {
      stop?.()
      resolve()
    }, ms)
    const stop = cancellation?.onCancel(() => {
      timers.clearTimeout(handle)
      reject(new ClientGoneError())
    })
  })
}
