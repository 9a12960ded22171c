/** The timer functions time-dependent primitives take, so that tests can drive time themselves. */
export type Timers = {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/** Resolves after `ms` (at once for 0 or less), on `timers`. */
export function sleep(ms: number, timers: Timers = systemTimers): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve) => {
    timers.setTimeout(resolve, ms)
  })
}
