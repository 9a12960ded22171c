import { systemTimers, type Timers } from './Timers.ts'

/**
 * Runs `work` and settles with the value it hands to `settle`, or, if none is in after `timeoutMs`,
 * with `onTimeout()`'s value (`onTimeout` is the place to stop the work: it is called once, only on
 * timeout). Whichever comes first wins; later values are ignored. The timer is cleared as soon as
 * the work settles, and never set when it settles at once. `work` hands over its value through a
 * callback rather than a promise: one promise per call, not three (this is on every upstream attempt).
 */
export function withTimeout<T>(
  work: (settle: (value: T) => void) => void,
  timeoutMs: number,
  onTimeout: () => T,
  timers: Timers = systemTimers,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false
    let timer: unknown
    const settle = (value: T) => {
      if (done) return
      done = true
      if (timer !== undefined) timers.clearTimeout(timer)
      resolve(value)
    }
    try {
      work(settle)
    } catch (err) {
      done = true
      reject(err)
      return
    }
    if (done) return
    timer = timers.setTimeout(() => {
      if (done) return
      done = true
      try {
        resolve(onTimeout())
      } catch (err) {
        reject(err)
      }
    }, timeoutMs)
  })
}
