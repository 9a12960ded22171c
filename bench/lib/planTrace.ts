import { createRandom } from '../../test/helpers/createRandom.ts'
import { drawHeadRead, drawMethod, drawnPerTick, type HeadRead, type TraceMethod } from './methodShares.ts'

/**
 * A call drawn for a tick: its method, the numbers that choose its params (toTraceCall), and how long
 * after the tick's head read it is made.
 */
export type Draw = { method: TraceMethod; choices: [number, number, number]; afterMs: number }

/**
 * One refresh of a dapp's page: a head read, then the drawn calls, half at once (as a page's hooks
 * fire together), half over the next 4 s (as its parts load, refetch and the user clicks: viem polls
 * every 4 s by default), all at what the head read answered; and, sometimes, a deposit sent (straight
 * to the node: a send is one node call however it is served, so it is left out of the calls counted).
 */
export type Tick = { atMs: number; headRead: HeadRead; draws: Draw[]; sendTag: bigint | undefined }

export type UserTrace = { user: number; ticks: Tick[] }

export type TraceOptions = { seed: number; userCount: number; seconds: number }

const tickMs = { min: 4_000, max: 12_000 }
const sendChance = 0.1
const spreadMs = 4_000

/**
 * The workload: for each user, its ticks over `seconds`, every choice drawn from `seed` (the same seed,
 * the same trace). Each user refreshes every 4-12 s (its own interval, with a jitter a tick), from a
 * moment of its first interval. The params are bound when the trace is replayed, to the block the tick
 * read and the transactions on the chain then.
 */
export function planTrace({ seed, userCount, seconds }: TraceOptions): UserTrace[] {
  return Array.from({ length: userCount }, (_, user) => {
    const random = createRandom(seed * 1_000_003 + user)
    const intervalMs = tickMs.min + random.next() * (tickMs.max - tickMs.min)
    const ticks: Tick[] = []
    for (let atMs = random.next() * intervalMs; atMs < seconds * 1_000; ) {
      const headRead = drawHeadRead(random)
      const count = drawnPerTick - 4 + random.int(9)
      const draws = Array.from({ length: count }, (): Draw => {
        const method = drawMethod(random)
        const afterMs = random.chance(0.5) ? 0 : random.next() * spreadMs
        return { method, choices: [random.next(), random.next(), random.next()], afterMs }
      })
      const sendTag = random.chance(sendChance) ? BigInt(random.int(1_000)) : undefined
      ticks.push({ atMs, headRead, draws, sendTag })
      atMs += intervalMs * (0.9 + random.next() * 0.2)
    }
    return { user, ticks }
  })
}

/** The calls a trace makes (its head reads and draws). */
export function countTraceCalls(trace: UserTrace[]): number {
  return trace.reduce(
    (sum, { ticks }) => sum + ticks.reduce((calls, tick) => calls + 1 + tick.draws.length, 0),
    0,
  )
}
