/** How deliveries that failed are tried again: exponential backoff with jitter, capped, for a while. */
export type RetrySchedule = {
  /** The wait after the first failed attempt (before jitter). */
  baseMs: number
  /** The longest wait between two attempts (before jitter). */
  maxMs: number
  /** How long after the event it is tried at all; past it the delivery is given up. */
  forMs: number
}

/**
 * When the attempt after `failures` failed ones is due, or undefined once that would be past the
 * event's `forMs`: the wait doubles from `baseMs` up to `maxMs`, and is drawn from its upper half
 * (`random` in [0, 1)) so that receivers that came back are not hit by every sender at once.
 */
export function nextAttemptAt(
  schedule: RetrySchedule,
  failures: number,
  createdAtMs: number,
  nowMs: number,
  random: number,
): number | undefined {
  const exponent = Math.min(Math.max(failures - 1, 0), 40)
  const waitMs = Math.min(schedule.maxMs, schedule.baseMs * 2 ** exponent)
  const at = nowMs + Math.round(waitMs / 2 + (random * waitMs) / 2)
  return at > createdAtMs + schedule.forMs ? undefined : at
}
