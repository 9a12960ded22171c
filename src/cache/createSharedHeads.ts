import { systemTimers, type Timers } from '../failsafe/Timers.ts'

/** One network's highest block number shown to a client, by any instance. */
export type SharedHead = {
  /** The highest this instance may tell a client. */
  readonly shown: bigint
  /**
   * A number this instance found and would tell a client. Higher than `shown`, it is raised in Redis
   * (announced to every instance) and becomes `shown` at the moment every instance shows it (see
   * createSharedHeads): the promise settles then (never rejects). Undefined when nothing need be
   * waited for (not higher, or Redis away: then it is shown at once, as by a single instance).
   */
  show(number: bigint): Promise<void> | undefined
}

/** A chain's number as Redis keeps it, and when it was raised there (Redis's clock, µs), if known. */
export type KeptHead = { number: bigint; raisedAtUs: string | undefined }

export type SharedHeadsOptions = {
  /** How long after its raise in Redis (Redis's clock) a number is shown: the time for every instance to hear of it. */
  graceMs: number
  /** Raises a chain's number in Redis; undefined when Redis is away or failed (never rejects). */
  raise(chainId: number, number: bigint): Promise<KeptHead | undefined>
  /** Whether Redis is there to raise in. */
  connected(): boolean
  timers?: Timers
  /** This process's monotonic clock, ms. */
  now?: () => number
}

/**
 * Clock samples kept (one a second): of the last minute's, the newest whose round trip is about as
 * short as the shortest (see `offsetSample`) is used.
 */
const samplesKept = 60

type Waiting = { number: bigint; shown: Promise<void> }
/** A number to be shown at `showAt` (this process's clock). */
type Scheduled = Waiting & { showAt: number }
type Head = {
  shown: bigint
  /** Numbers heard of and not shown yet, in the order they come (higher numbers, later times). */
  scheduled: Scheduled[]
  raising: Waiting | undefined
}

/**
 * When each instance may tell a client a block number, so that once any instance has answered N,
 * every instance asked afterwards answers N or more, without a Redis round trip per call. A number
 * is raised in Redis with Redis's time and announced with it; every instance (the one that raised it
 * too) shows it from that time plus the grace on, read on its own clock through the offset it
 * measures to Redis's (TIME, as NTP does). The instances switch together, all after the announcement
 * reached them (when it takes less than the grace): only the errors of those offsets (at most half a
 * round trip to Redis each) separate them, and the time is compared on each look, not left to a
 * timer. A number heard of after its time is shown at once; one whose time, or the clock's offset,
 * is not known yet, one grace after it is heard of. Nothing waits longer than the grace from when the
 * number is heard of.
 */
export function createSharedHeads(options: SharedHeadsOptions) {
  const timers = options.timers ?? systemTimers
  const now = options.now ?? (() => performance.now())
  const { graceMs } = options
  const heads = new Map<number, Head>()
  const samples: { offsetMs: number; roundTripMs: number }[] = []

  function raiseShown(head: Head, number: bigint): void {
    if (number > head.shown) head.shown = number
    head.scheduled = head.scheduled.filter((scheduled) => scheduled.number > head.shown)
  }
  /** The numbers whose time has come are shown. */
  function catchUp(head: Head): void {
    if (head.scheduled.length === 0) return
    const time = now()
    let due: bigint | undefined
    for (const scheduled of head.scheduled) if (scheduled.showAt <= time) due = scheduled.number
    if (due !== undefined) raiseShown(head, due)
  }

  /** A number Redis keeps (announced, read, or answered to a raise): shown from its time on. */
  function offer(chainId: number, kept: KeptHead): void {
    const head = heads.get(chainId)
    const { number } = kept
    if (!head) return
    catchUp(head)
    const last = head.scheduled.at(-1)
    if (number <= head.shown || (last && last.number >= number)) return
    const heardAt = now()
    // never before it is heard of, never longer than the grace after (a clock that jumped)
    const waitMs = Math.min((localTime(kept.raisedAtUs) ?? heardAt) + graceMs - heardAt, graceMs)
    if (waitMs <= 0) {
      raiseShown(head, number)
      return
    }
    let resolve: () => void = () => {}
    const scheduled: Scheduled = {
      number,
      showAt: heardAt + waitMs,
      shown: new Promise((done) => {
        resolve = done
      }),
    }
    head.scheduled.push(scheduled)
    // for the calls waiting on it: its time has come (a timer may fire a fraction of a ms early)
    timers.setTimeout(() => {
      raiseShown(head, number)
      resolve()
    }, waitMs)
  }

  /** Redis's time (µs) on this process's clock, once an offset is known. */
  function localTime(redisUs: string | undefined): number | undefined {
    if (redisUs === undefined || !/^\d{1,20}$/.test(redisUs) || samples.length === 0) return undefined
    const best = offsetSample()
    return best === undefined ? undefined : Number(redisUs) / 1000 - best.offsetMs
  }

  /**
   * The newest sample whose round trip is within half again of the shortest (and 1 ms): nearly as
   * exact as the shortest, and no older than need be, so a step of Redis's clock (NTP) is followed
   * within seconds rather than kept for a minute by a stale sample that happened to be fastest.
   */
  function offsetSample(): { offsetMs: number } | undefined {
    let shortest = Number.POSITIVE_INFINITY
    for (const sample of samples) shortest = Math.min(shortest, sample.roundTripMs)
    const within = Math.max(shortest * 1.5, shortest + 1)
    for (let index = samples.length - 1; index >= 0; index--) {
      const sample = samples[index]
      if (sample !== undefined && sample.roundTripMs <= within) return sample
    }
    return undefined
  }

  function forChain(chainId: number): SharedHead {
    let head = heads.get(chainId)
    if (!head) {
      head = { shown: 0n, scheduled: [], raising: undefined }
      heads.set(chainId, head)
    }
    const own = head
    const waitingFor = (number: bigint) => {
      for (const scheduled of own.scheduled) if (scheduled.number >= number) return scheduled
      return own.raising && own.raising.number >= number ? own.raising : undefined
    }
    return {
      get shown() {
        catchUp(own)
        return own.shown
      },
      show(number) {
        catchUp(own)
        if (number <= own.shown) return undefined
        // Redis away: this instance answers as if it were the only one
        if (!options.connected()) {
          raiseShown(own, number)
          return undefined
        }
        // calls that found the same number (or a lower one) wait together
        const waiting = waitingFor(number)
        if (waiting) return waiting.shown
        const shown = options
          .raise(chainId, number)
          .then((kept) => {
            if (kept) offer(chainId, kept)
            const scheduled = own.scheduled.find((each) => each.number >= number)
            if (scheduled) return scheduled.shown
            // shown already, or a raise that failed: shown as by a single instance
            raiseShown(own, number)
            return undefined
          })
          .finally(() => {
            if (own.raising?.shown === shown) own.raising = undefined
          })
        own.raising = { number, shown }
        return shown
      },
    }
  }

  return {
    forChain,
    offer,
    /** The chains asked for, to read their numbers again. */
    chains: () => [...heads.keys()],
    /**
     * A reading of Redis's clock (TIME: seconds, µs) taken between `sentAt` and `answeredAt` (this
     * process's clock): the offset between the two clocks, to within half the round trip.
     */
    clockSample(sentAt: number, redisTime: [string, string], answeredAt: number): void {
      const redisMs = Number(redisTime[0]) * 1000 + Number(redisTime[1]) / 1000
      if (!Number.isFinite(redisMs) || answeredAt < sentAt) return
      samples.push({ offsetMs: redisMs - (sentAt + answeredAt) / 2, roundTripMs: answeredAt - sentAt })
      if (samples.length > samplesKept) samples.shift()
    },
  }
}
