import { systemTimers, type Timers } from './Timers.ts'

/** The longest delay a timer takes (2^31 - 1 ms, some 24.8 days); a later time is reached in steps. */
const maxDelayMs = 2_147_483_647

/**
 * Calls `callback` once, when `now()` has reached `atMs` (at once if it has already). A timer that
 * fires before `now()` says the time has come (timers and the clock differ by a millisecond or so, or
 * the clock is a test's) waits again for what is left. Returns the function that cancels it.
 */
export function callAt(
  atMs: number,
  callback: () => void,
  now: () => number,
  timers: Timers = systemTimers,
): () => void {
  let timer: unknown
  let cancelled = false
  const arm = () => {
    if (cancelled) return
    const leftMs = atMs - now()
    if (leftMs <= 0) {
      timer = undefined
      callback()
      return
    }
    timer = timers.setTimeout(arm, Math.min(leftMs, maxDelayMs))
  }
  arm()
  return () => {
    cancelled = true
    if (timer !== undefined) timers.clearTimeout(timer)
  }
}
