import { until } from './until.ts'

/** Whether `check()` comes to hold within `ms`. */
async function holdsWithin(check: () => boolean, ms: number): Promise<boolean> {
  try {
    await until(check, '', ms)
    return true
  } catch {
    return false
  }
}

/**
 * Repeats `act` (mine a block, send a transaction) until what it made is `announced` to the
 * subscriptions under test: the proof that they are live. What comes before they are (a client's
 * eth_subscribe not yet answered, the gateway's head feed not yet anchored on a first head, its
 * upstream subscription not yet answered) is never announced, and nothing tells the test when they
 * are; so each try waits a bounded second, and running out of one only means one more try: it never
 * decides the test (20 tries without an announcement do). Returns what the announced try made.
 */
export async function untilAnnounced<T>(act: () => Promise<T>, announced: (made: T) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const made = await act()
    if (await holdsWithin(() => announced(made), 1_000)) return made
    if (attempt === 20) throw new Error(`nothing announced after ${attempt} tries`)
  }
}
