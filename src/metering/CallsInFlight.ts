import { performance } from 'node:perf_hooks'
import { ClientGoneError } from '../errors/callEndings.ts'
import { CallsInFlightLimitError } from '../errors/limitErrors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'

/** A slot that frees this near a waiting call's deadline (or later) refuses it: no time to send it. */
const minSendMs = 1

/** What ends a call's wait for a slot: its deadline, and its client going away. */
export type SlotWait = {
  /** On the `now` clock CallsInFlight was made with (performance.now() unless a test gives one). */
  deadline: number
  cancellation?: Cancellation | undefined
}

/** A call waiting for one of its key's slots; settled once, by a slot, its deadline or its client. */
type Waiter = {
  admit(calls: KeyCalls): void
  /** Refused: its deadline came (or is too near to send the call in the time left). */
  refuse(): void
  deadline: number
  timer: unknown
  unsubscribe: (() => void) | undefined
}

/** One key's calls in flight, and those waiting for one of them to end, first come first served. */
export class KeyCalls {
  inFlight = 0
  waiting: Waiter[] | undefined

  constructor(readonly keyId: number) {}
}

/**
 * Each key's calls in flight at the upstreams, bounded per key (its plan's `maxCallsInFlight`,
 * docs/plans.md), in this process: one key cannot occupy a node with slow calls while the others
 * wait. A call past its key's bound waits its turn until one of the key's calls ends, by the
 * deadline it is given, and is refused (429, event -33500, for nothing) if none ends by then. A key is forgotten
 * once it has nothing in flight: memory follows the keys at work, not every key ever seen.
 */
export class CallsInFlight {
  readonly #keys = new Map<number, KeyCalls>()

  constructor(
    private readonly timers: Timers = systemTimers,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Keys with calls in flight or waiting. */
  get keys(): number {
    return this.#keys.size
  }

  /**
   * A slot for one of key `keyId`'s calls: at once while it has fewer than `limit` in flight and
   * none waiting; else once one ends, by `wait.deadline`. Rejects with CallsInFlightLimitError at
   * the deadline, ClientGoneError when the client goes first. Give the slot
   * back with `leave`, once.
   */
  enter(keyId: number, limit: number, wait: SlotWait): KeyCalls | Promise<KeyCalls> {
    let calls = this.#keys.get(keyId)
    if (calls === undefined) {
      calls = new KeyCalls(keyId)
      this.#keys.set(keyId, calls)
    }
    if (calls.inFlight < limit && calls.waiting === undefined) {
      calls.inFlight++
      return calls
    }
    return this.#queue(calls, limit, wait)
  }

  /**
   * A call of `calls`' key ended: its slot goes to the first call waiting that still has time to be
   * sent (one whose deadline is as good as here is refused as if it had come: the slot would only
   * send the node a call it cannot answer in time), if any.
   */
  leave(calls: KeyCalls): void {
    for (;;) {
      const next = calls.waiting?.shift()
      if (calls.waiting?.length === 0) calls.waiting = undefined
      if (!next) break
      if (next.deadline - this.now() > minSendMs) {
        next.admit(calls)
        return
      }
      next.refuse()
    }
    calls.inFlight--
    if (calls.inFlight === 0) this.#keys.delete(calls.keyId)
  }

  #queue(calls: KeyCalls, limit: number, { deadline, cancellation }: SlotWait): Promise<KeyCalls> {
    return new Promise<KeyCalls>((resolve, reject) => {
      const settled = () => {
        this.timers.clearTimeout(waiter.timer)
        waiter.unsubscribe?.()
      }
      const waiter: Waiter = {
        admit: (admitted) => {
          settled()
          resolve(admitted)
        },
        refuse: () => {
          settled()
          reject(new CallsInFlightLimitError(limit))
        },
        deadline,
        timer: undefined,
        unsubscribe: undefined,
      }
      const giveUp = (err: Error) => {
        settled()
        this.#drop(calls, waiter)
        reject(err)
      }
      waiter.timer = this.timers.setTimeout(
        () => giveUp(new CallsInFlightLimitError(limit)),
        Math.max(0, deadline - this.now()),
      )
      calls.waiting = calls.waiting ?? []
      calls.waiting.push(waiter)
      if (cancellation) waiter.unsubscribe = cancellation.onCancel(() => giveUp(new ClientGoneError()))
    })
  }

  /** A waiter that gave up leaves the queue; a key with nothing in flight and no one waiting is forgotten. */
  #drop(calls: KeyCalls, waiter: Waiter): void {
    const waiting = calls.waiting
    if (!waiting) return
    const index = waiting.indexOf(waiter)
    if (index !== -1) waiting.splice(index, 1)
    if (waiting.length > 0) return
    calls.waiting = undefined
    if (calls.inFlight === 0) this.#keys.delete(calls.keyId)
  }
}
