import type { TollgateError } from '../errors/TollgateError.ts'
import type { Admission, MeterSubject } from './createMeter.ts'
import type { RateSlice } from './RateSlice.ts'

/** One subject's (`account:<id>`, `key:<id>`) counts for one UTC day in this process. */
export type DayCounter = {
  day: string
  /** Without a bank: the day's charges (read back from the store at start). With one: this instance's. */
  used: number
  reserved: number
  /** With a bank: credits this instance got for the day (leases and borrowing), spent ones included. */
  leased: number
  /** The day's credits granted to every instance, as last seen (from the store until the bank answers). */
  granted: number
  /** Credits borrowed (bank down, or a notification) since the last exchange was sent. */
  unsent: number
  /** `used` as the bank last acknowledged it. */
  reportedUsed: number
  /** What the bank counts as this instance's free credits (`f:` in creditScript.ts) since the last exchange. */
  reportedFree: number
  /**
   * The lease went back on request: the next report (due even with nothing to report) shows this
   * instance what the others then spent of it.
   */
  refresh: boolean
  lastUseMs: number
}

/** The first check a call fails in this process now, and the error that refuses it. */
export type Refusal = { check: 'account' | 'key' | 'keyRate' | 'accountRate'; error: TollgateError }

/** What the desks need of the meter's local accounting (createMeter.ts). */
export type LocalLedger = {
  /** The time, with the meter's day and hour moved on to it. */
  now(): number
  day(): string
  counters: ReadonlyMap<string, DayCounter>
  counter(subject: string): DayCounter
  slice(subject: string, creditsPerSecond: number, nowMs: number): RateSlice
  available(found: DayCounter, limit: number, nowMs: number): number
  left(found: DayCounter, limit: number, nowMs: number): number
  refusalOf(subject: MeterSubject, costCredits: number, nowMs: number): Refusal | undefined
  hold(subject: MeterSubject, costCredits: number, nowMs: number): Admission
  /** Of a subject's day, what this process has written to the store. */
  flushedCredits(subject: string, day: string): number
  /** Runs `work` while no usage flush runs (so the store and flushedCredits agree). */
  exclusive<T>(work: () => Promise<T>): Promise<T>
}
