import type { Timers } from '../../src/failsafe/Timers.ts'

export type FakeTimers = Timers & {
  /** The fake time, ms. */
  now(): number
  /** Moves time on by `ms`, firing every timer due on the way, in order; lets promises settle after each. */
  advance(ms: number): Promise<void>
  /** Timers set and not yet fired or cleared. */
  pending(): number
}

/** Timers on a clock that moves only when a test says so: time-dependent code tested without sleeping. */
export function createFakeTimers(): FakeTimers {
  let time = 0
  let nextId = 0
  const timers = new Map<number, { at: number; callback: () => void }>()
  const settle = async () => {
    for (let index = 0; index < 10; index++) await Promise.resolve()
  }
  return {
    now: () => time,
    setTimeout(callback, ms) {
      const id = ++nextId
      timers.set(id, { at: time + Math.max(0, ms), callback })
      return id
    },
    clearTimeout(handle) {
      timers.delete(handle as number)
    },
    pending: () => timers.size,
    async advance(ms) {
      const until = time + ms
      await settle()
      for (;;) {
        let due: [number, { at: number; callback: () => void }] | undefined
        for (const entry of timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry
        if (!due) break
        timers.delete(due[0])
        time = due[1].at
        due[1].callback()
        await settle()
      }
      time = until
      await settle()
    },
  }
}
