import { Cancellation } from './Cancellation.ts'
import { systemTimers, type Timers } from './Timers.ts'

export type HedgeOptions<T> = {
  /** How long the attempts under way get before one more is started. */
  delayMs: number
  /** Attempts started besides the first, at most. */
  maxHedges: number
  /** Whether a result ends the race (a good answer); any other waits for the attempts still running. */
  isFinal: (result: T) => boolean
  /** Told each time a hedge starts. */
  onHedge?: () => void
  timers?: Timers
}

/**
 * Races attempts against slowness: starts attempt 0, and while no result is in after `delayMs`,
 * one more (up to `maxHedges`), unless `attempt` answers undefined (nothing left to try). Resolves
 * with the first final result and cancels the attempts still running (their `stop`); when no result
 * is final, with the last one once every attempt has settled. A first result that comes before any
 * hedge started is returned as it is, final or not: what follows a failure is a retry's business.
 * `attempt` must not reject (it returns its failures as results).
 */
export function withHedge<T>(
  attempt: (index: number, stop: Cancellation) => Promise<T> | undefined,
  options: HedgeOptions<T>,
): Promise<T> {
  const timers = options.timers ?? systemTimers
  return new Promise<T>((resolve) => {
    // the attempts still running
    const running = new Set<Cancellation>()
    let done = false
    let timer: unknown

    const finish = (result: T) => {
      done = true
      if (timer !== undefined) timers.clearTimeout(timer)
      for (const stop of running) stop.cancel()
      resolve(result)
    }

    const start = (index: number): boolean => {
      const stop = new Cancellation()
      const work = attempt(index, stop)
      if (!work) return false
      running.add(stop)
      work.then((result) => {
        running.delete(stop)
        if (done) return
        if (options.isFinal(result) || running.size === 0) finish(result)
      })
      return true
    }

    const schedule = (index: number) => {
      if (index > options.maxHedges) return
      timer = timers.setTimeout(() => {
        timer = undefined
        if (done || !start(index)) return
        options.onHedge?.()
        schedule(index + 1)
      }, options.delayMs)
    }

    if (!start(0)) throw new Error('withHedge: the first attempt must start')
    schedule(1)
  })
}
