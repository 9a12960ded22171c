import { performance } from 'node:perf_hooks'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'

/** One network's highest block number shown to a client, by any instance. */
export type SharedHead = {
  /** The highest this instance may tell a client. */
  readonly shown: bigint
  /** Lowers made or heard here: a number found before one is not shown. */
  readonly lowers: number
  /**
   * A number this instance found and would tell a client. Higher than `shown`, it is raised in Redis
   * (announced to every instance) and becomes `shown` at the moment every instance shows it (see
   * createSharedHeads): the promise settles then (never rejects). Undefined when nothing need be
   * waited for (not higher, or Redis away: then it is shown at once, as by a single instance).
   */
  show(number: bigint): Promise<void> | undefined
  /**
   * A rewind of the chain itself (the in-sync upstreams agree on a lower head): `number` is shown
   * from now on, here at once and by every instance once it hears (Redis keeps it in a new
   * generation: raises of numbers found before it are refused). While Redis is away the lower is
   * made there once it is back. Settles when Redis answered (never rejects).
   */
  lower(number: bigint): Promise<void>
  /** Called on every lower, this instance's or another's (the network drops its head-scoped answers); the returned function stops it. */
  onLower(listener: () => void): () => void
}

/**
 * A chain's number as Redis keeps it, when it was raised there (Redis's clock, µs), if known, and its
 * generation (bumped by every lower; 0 before the first).
 */
export type KeptHead = { number: bigint; raisedAtUs: string | undefined; generation: bigint }

export type SharedHeadsOptions = {
  /** How long after its raise in Redis (Redis's clock) a number is shown: the time for every instance to hear of it. */
  graceMs: number
  /** Raises a chain's number in Redis within `generation`; undefined when Redis is away or failed (never rejects). */
  raise(chainId: number, number: bigint, generation: bigint): Promise<KeptHead | undefined>
  /** Lowers a chain's number in Redis (a new generation); undefined when Redis is away or failed (never rejects). */
  lower(chainId: number, number: bigint): Promise<KeptHead | undefined>
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
  /** The generation of `shown` as Redis kept it (0n before any lower). */
  generation: bigint
  /** Lowers made or heard here: a raise sent before one is out of date when it answers. */
  lowers: number
  /** A lower Redis has not taken yet (away or failing): made again on every `reread`. */
  lowering: { number: bigint; failed: boolean } | undefined
  /** Numbers heard of and not shown yet, in the order they come (higher numbers, later times). */
  scheduled: Scheduled[]
  raising: Waiting | undefined
  listeners: (() => void)[]
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

  /** A lower (this instance's, or another's heard of): shown at once, the numbers waiting dropped. */
  function lowerTo(head: Head, number: bigint, generation: bigint): void {
    head.shown = number
    head.generation = generation
    head.lowers++
    // their timers still settle the calls waiting on them, but show nothing (see offer)
    head.scheduled = []
    head.raising = undefined
    for (const listener of head.listeners) listener()
  }

  /**
   * A number Redis keeps (announced, read, or answered to a raise or lower): within the generation
   * shown, shown from its time on; of a newer one (a lower), shown at once; of an older one, ignored.
   */
  function offer(chainId: number, kept: KeptHead): void {
    const head = heads.get(chainId)
    const { number } = kept
    if (!head || kept.generation < head.generation) return
    // a lower of this instance's not in Redis yet: what Redis kept before it is out of date
    if (head.lowering && kept.generation === head.generation) return
    if (kept.generation > head.generation) {
      lowerTo(head, number, kept.generation)
      return
    }
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
    const { lowers } = head
    // for the calls waiting on it: its time has come (a timer may fire a fraction of a ms early)
    timers.setTimeout(() => {
      if (head.lowers === lowers) raiseShown(head, number)
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
      head = {
        shown: 0n,
        generation: 0n,
        lowers: 0,
        lowering: undefined,
        scheduled: [],
        raising: undefined,
        listeners: [],
      }
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
      get lowers() {
        return own.lowers
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
        const { generation, lowers } = own
        const shown = options
          .raise(chainId, number, generation)
          .then((kept) => {
            // the chain went back meanwhile: the number was found before it
            if (own.lowers !== lowers) return undefined
            if (kept) {
              offer(chainId, kept)
              // refused: found before a rewind this instance had not heard of (now it has)
              if (kept.generation !== generation) return undefined
            }
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
      lower(number) {
        lowerTo(own, number, own.generation)
        own.lowering = { number, failed: false }
        return sendLower(chainId, own)
      },
      onLower(listener) {
        own.listeners.push(listener)
        return () => {
          own.listeners = own.listeners.filter((each) => each !== listener)
        }
      },
    }
  }

  /** Makes a chain's lower in Redis; kept to make again while Redis does not take it. */
  function sendLower(chainId: number, head: Head): Promise<void> {
    const lowering = head.lowering
    if (!lowering) return Promise.resolve()
    if (!options.connected()) {
      lowering.failed = true
      return Promise.resolve()
    }
    lowering.failed = false
    return options.lower(chainId, lowering.number).then((kept) => {
      if (head.lowering !== lowering) return
      if (!kept) {
        lowering.failed = true
        return
      }
      head.lowering = undefined
      offer(chainId, kept)
    })
  }

  return {
    forChain,
    offer,
    /** The chains asked for, to read their numbers again. */
    chains: () => [...heads.keys()],
    /** Makes the lowers Redis has not taken yet (on reconnection, and with every reading again). */
    retryLowers(): void {
      for (const [chainId, head] of heads) if (head.lowering?.failed) void sendLower(chainId, head)
    },
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
