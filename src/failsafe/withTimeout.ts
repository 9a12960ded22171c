import { systemTimers, type Timers } from './Timers.ts'

/**
 * Settles with `work`'s outcome, or, if it is not in after `timeoutMs`, with `onTimeout()`'s value
 * (`onTimeout` is the place to stop the work: it is called once, only on timeout). The timer is
 * cleared as soon as the work settles.
 */
export function withTimeout<T>(
  work: Promise<T>,
  timeoutMs: number,
  onTimeout: () => T,
  timers: Timers = systemTimers,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false
    const timer = timers.setTimeout(() => {
      if (done) return
      done = true
      try {
        resolve(onTimeout())
      } catch (err) {
        reject(err)
      }
    }, timeoutMs)
    work.then(
      (value) => {
        if (done) return
        done = true
        timers.clearTimeout(timer)
        resolve(value)
      },
      (err: unknown) => {
        if (done) return
        done = true
        timers.clearTimeout(timer)
        reject(err)
      },
    )
  })
}
