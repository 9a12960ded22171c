import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'

/**
 * The longest a caller waits for the database's answer: under the 1 s a load balancer or Kubernetes
 * probe commonly allows itself, so a slow database is reported, not a probe that timed out (and a
 * scrape, whose own timeout is commonly 10 s, is not held up either).
 */
const pingWaitMs = 500

/**
 * Whether the database answers, for /readyz and /metrics alike: one ping at a time for both. A
 * caller waits for the ping that is out, or asks when none is (the first of a process included),
 * up to pingWaitMs each; one that tires of waiting is given the last answer (down until the
 * first one). So a new instance's first /readyz is the database's answer even when a scrape asked
 * first, and a black-holed database has one ping hanging, however often it is probed and
 * scraped, and holds up no caller for long.
 */
export function createDatabaseProbe(
  pingDatabase: () => Promise<boolean>,
  timers: Timers = systemTimers,
): () => Promise<boolean> {
  let lastPing = false
  let pinging: Promise<boolean> | undefined
  const ping = async (): Promise<boolean> => {
    try {
      lastPing = await pingDatabase()
    } catch {
      lastPing = false
    }
    return lastPing
  }
  return () => {
    // cleared in a later turn than it is set, even when the ping fails at once
    pinging ??= ping().finally(() => {
      pinging = undefined
    })
    const answer = pinging
    return withTimeout(
      (settle) => void answer.then(settle),
      pingWaitMs,
      () => lastPing,
      timers,
    )
  }
}
