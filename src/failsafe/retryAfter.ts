import { sleep, systemTimers, type Timers } from './Timers.ts'

export type RetryOptions<T> = {
  /** Whether another try may follow this outcome (the caller's one judgement of it). */
  retryable: (outcome: T) => boolean
  /** The pause before try `index` (1: the first retry), ms; 0 for none (getBackoffMs gives one with jitter). */
  pauseMs: (index: number) => number
  /** When, on `now`'s clock, no more tries start. */
  deadline: number
  now: () => number
  timers?: Timers
}

/**
 * Tries again after a first try the caller made itself (a caller that awaits its first try directly,
 * with no layer of this one's between, on the path where it answers): `tryOnce(index)` from index 1
 * while the outcome is retryable, until one is not, or it answers undefined (nothing left to try), or
 * the deadline passes. A pause takes at most a quarter of the time left, so that the try after it
 * still has time to answer. `first` is the first try's outcome, retryable; resolves with the last
 * outcome. `tryOnce` must not reject (it returns failures as outcomes).
 */
export async function retryAfter<T>(
  first: T,
  tryOnce: (index: number) => Promise<T> | undefined,
  options: RetryOptions<T>,
): Promise<T> {
  const { now, deadline } = options
  let last = first
  for (let index = 1; ; index++) {
    const pauseMs = options.pauseMs(index)
    if (pauseMs > 0) {
      await sleep(Math.min(pauseMs, (deadline - now()) / 4), options.timers ?? systemTimers)
    }
    if (deadline - now() <= 0) return last
    const work = tryOnce(index)
    if (!work) return last
    last = await work
    if (!options.retryable(last)) return last
  }
}
