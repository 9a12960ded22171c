import { TollgateError } from '../errors/TollgateError.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { BankHealth } from './BankHealth.ts'
import { type Clock, nextUtcMidnight, utcDay } from './clock.ts'
import { createBankClient } from './createBankClient.ts'
import { createUsageBuffer } from './createUsageBuffer.ts'
import type { UsageSpool } from './createUsageSpool.ts'
import type { CreditBank } from './creditBank.ts'
import type { LocalBalance } from './LocalBalance.ts'
import { LocalLedger } from './LocalLedger.ts'
import type { Admission, Meter, MeterRefusals, MeterSubject, Settlement, UsageRecord } from './meterTypes.ts'
import type { UsageStore } from './usageStore.ts'

export type MeterOptions = {
  store: UsageStore
  clock: Clock
  /** The flush timer and the wait for a recall run on these (tests pass fake ones with `clock`). */
  timers?: Timers
  /** How often pending usage is written (and, with a bank, reported); a crash loses at most this much usage. */
  flushMs: number
  onError?: (err: unknown) => void
  /**
   * A call refused (402/429), with whose it was: usage alerts note a key's first per-second refusal
   * of the day. Called on the refusal's path: it must only note.
   */
  onRefused?: ((subject: MeterSubject, err: unknown) => void) | undefined
  /** Where the last flush (on close) keeps what the store does not take (createUsageBuffer). */
  spool?: UsageSpool | undefined
  /**
   * Shares the daily balances and per-second limits with other instances (Redis): credits are
   * leased from the bank and spent locally. Without it this process is the only one counting.
   */
  bank?: CreditBank | undefined
  /** What the meter does while the bank cannot be reached (`metering.onRedisDown`). */
  onBankDown?: 'open' | 'closed'
  /** A lease is at most this many seconds of the subject's per-second limit; a slice of it, a quarter. */
  leaseSeconds?: number
  /** A lease this instance has not used for this long goes back to the bank. */
  idleMs?: number
  /**
   * At the end of a balance, the longest a call waits for other instances to give back credits they
   * hold unspent (docs/operations.md, Credits across instances).
   */
  recallMs?: number
}

/**
 * The credit ledger of one gateway process: balances in memory (nothing awaits the database on the
 * request path), usage written to the store every `flushMs` and on close, today's totals read back
 * at start so a restart neither resets nor loses usage.
 *
 * With a bank, the balances are shared: a call is admitted from this instance's lease at once; when
 * the lease (or per-second slice) cannot cover it, the call waits for one exchange with the bank,
 * batched with the other calls of its account that wait too (createBankClient.ts). Leases are
 * reported (and renewed) every `flushMs`, given back when idle and on close (docs/design/metering.md).
 */
export async function createMeter({
  store,
  clock,
  timers = systemTimers,
  flushMs,
  onError,
  onRefused,
  spool,
  bank,
  onBankDown = 'open',
  leaseSeconds = 1,
  idleMs = 5_000,
  recallMs = 200,
}: MeterOptions): Promise<Meter> {
  const loaded = await store.loadDailyUsage(utcDay(clock.now()))
  const health = bank && new BankHealth(onBankDown, bank.leaseTtlMs, clock.now(), onError)
  const ledger = new LocalLedger(clock, loaded, health)
  const buffer = createUsageBuffer(store, { spool, timers, instance: bank?.instanceId })
  const client =
    bank &&
    health &&
    createBankClient(ledger, {
      bank,
      health,
      store,
      leaseSeconds,
      idleMs,
      recallMs,
      flushedCredits: buffer.flushedCredits,
      exclusive: buffer.exclusive,
      timers,
    })

  const refusals: MeterRefusals = { '402': 0, '429': 0 }
  /** Counts a refusal (for /metrics): only calls the local balance could not take come here. */
  const counted = (err: unknown, subject: MeterSubject): unknown => {
    if (err instanceof TollgateError && (err.httpStatus === 402 || err.httpStatus === 429))
      refusals[err.httpStatus]++
    onRefused?.(subject, err)
    return err
  }

  function admit(subject: MeterSubject, costCredits: number): Admission | Promise<Admission> {
    const nowMs = ledger.now()
    const refusal = ledger.refusalOf(subject, costCredits, nowMs)
    if (refusal === undefined) return ledger.hold(subject, costCredits, nowMs)
    if (client === undefined) throw counted(refusal.error, subject)
    // this process cannot cover it: the bank's word
    return client.admit(subject, costCredits).catch((err: unknown) => {
      throw counted(err, subject)
    })
  }

  function chargeNotification(subject: MeterSubject, usage: UsageRecord): boolean {
    const nowMs = ledger.now()
    const credits = usage.credits
    const balances: [LocalBalance, number][] = [
      [ledger.balance(subject.accountCounter), subject.accountDailyCredits],
    ]
    if (subject.keyDailyCredits !== undefined)
      balances.push([ledger.balance(subject.keyCounter), subject.keyDailyCredits])
    let borrowed = false
    for (const [found, limit] of balances) {
      const missing = credits - ledger.available(found, limit, nowMs)
      if (missing <= 0) continue
      // a notification cannot wait for the bank: it borrows from the balance as last seen (reported at once)
      const mayBorrow = health !== undefined && (health.isUp() || onBankDown === 'open')
      if (!mayBorrow || !found.borrow(limit, missing)) return false
      borrowed = true
    }
    ledger.holdNotification(subject, credits)
    settle({ subject, day: ledger.day(), reservedCredits: credits }, [usage])
    if (borrowed) client?.report(subject)
    return true
  }

  function settle(admission: Admission, usage: UsageRecord[]): Settlement {
    const nowMs = ledger.now()
    const { subject } = admission
    let charged = 0
    for (const record of usage) {
      charged += record.credits
      buffer.addCall({
        keyId: subject.keyId,
        network: record.network,
        method: record.method,
        hour: ledger.hour(),
        credits: record.credits,
        failover: record.failover === true,
      })
    }
    ledger.settle(admission, charged, nowMs)
    if (charged > 0) {
      buffer.addCredits(subject.accountCounter, admission.day, charged)
      buffer.addCredits(subject.keyCounter, admission.day, charged)
    }
    if (admission.reservedCredits > charged) client?.refunded(subject)
    return {
      chargedCredits: charged,
      remainingCredits: ledger.remaining(subject, nowMs),
      resetSeconds: secondsUntil(ledger.dayEndsMs(), nowMs),
    }
  }

  async function flush(): Promise<void> {
    await buffer.flush()
  }

  // every flushMs: pending usage to the store, and (with a bank) a report of every lease
  let closed = false
  let flushTimer: unknown
  const scheduleFlush = () => {
    flushTimer = timers.setTimeout(() => {
      if (closed) return
      flush().catch((err) => onError?.(err))
      client?.reportAll()
      scheduleFlush()
    }, flushMs)
    ;(flushTimer as { unref?: () => void }).unref?.()
  }
  scheduleFlush()

  return {
    admit,
    settle,
    chargeNotification,
    remainingCredits: (subject) => ledger.remaining(subject, ledger.now()),
    usedShare(subject) {
      const nowMs = ledger.now()
      const account = ledger.usedShare(subject.accountCounter, subject.accountDailyCredits, nowMs)
      if (subject.keyDailyCredits === undefined) return account
      return Math.max(account, ledger.usedShare(subject.keyCounter, subject.keyDailyCredits, nowMs))
    },
    refusals,
    secondsToReset: () => {
      const nowMs = clock.now()
      return secondsUntil(nextUtcMidnight(nowMs), nowMs)
    },
    bankUp: () => health?.isUp(),
    flush,
    async close() {
      closed = true
      timers.clearTimeout(flushTimer)
      try {
        await buffer.close()
      } finally {
        // the last report gives every unspent lease back
        await client?.close()
      }
    },
  }
}

/** Whole seconds from `nowMs` until `atMs`, rounded up; 0 once it has passed. */
function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((atMs - nowMs) / 1000))
}
