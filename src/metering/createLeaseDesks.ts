import { RateLimitError } from '../errors/limitErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import { createBankDownFallback } from './createBankDownFallback.ts'
import {
  type BankRequestBuilt,
  type BankRequestEntry,
  createBankRequest,
  fullLeaseOf,
} from './createBankRequest.ts'
import type { Admission, MeterSubject } from './createMeter.ts'
import type { BankReply, BankSubjectRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import type { DayCounter, LocalLedger } from './LocalLedger.ts'
import type { UsageStore } from './usageStore.ts'

export type LeaseDesksOptions = {
  bank: CreditBank
  store: UsageStore
  onBankDown: 'open' | 'closed'
  /**
   * A lease is at most this many seconds of the subject's per-second limit (it cannot be spent
   * faster), a per-second slice a quarter of that.
   */
  leaseSeconds: number
  /** A lease unused for this long goes back to the bank. */
  idleMs: number
  /**
   * The longest a call waits, at the end of a balance, for other instances to give back credits
   * they hold unspent (a recall) before it is refused.
   */
  recallMs: number
  onError: ((err: unknown) => void) | undefined
}

export type LeaseDesks = {
  /** Admits a call this process's lease could not: after one exchange with the bank (batched per account). */
  wait(subject: MeterSubject, costCredits: number): Promise<Admission>
  /** Takes credits from the balance as last seen, without the bank; false when they are not there. */
  borrow(found: DayCounter, limit: number, credits: number): boolean
  /** Reports the subject's account (and its keys) soon. */
  report(subject: MeterSubject): void
  /**
   * A call settled for less than it held. Near the end of a balance (leases shrinking: less than
   * four full leases left in the pool as last seen), credits it freed beyond what the bank counts
   * free here are reported at once: another instance would refuse a call they pay. Per-second
   * credits its slices could not keep go back to the bank at once too (they pay a debt there).
   */
  refunded(subject: MeterSubject): void
  /** Reports every account that holds a lease or spent since its last report (renewing leases). */
  reportAll(): void
  /** Whether this process may still spend its leases (in closed mode, not once they expired). */
  leaseValid(nowMs: number): boolean
  /** Whether the bank answered last time. */
  isUp(): boolean
  /** Gives every lease back, and waits for it. */
  close(): Promise<void>
}

type Waiter = {
  subject: MeterSubject
  costCredits: number
  rounds: number
  /** Set when the call first waited for a recall: it is refused if the credits are not back by then. */
  recallUntil: number | undefined
  resolve: (admission: Admission) => void
  reject: (err: unknown) => void
}
/** One exchange with the bank at a time per account (its keys included), so reports never cross. */
type Desk = {
  waiters: Waiter[]
  sync: boolean
  running: Promise<void> | undefined
  /** Ends the wait of calls parked on a recall (credits came back, a report is due, or closing). */
  wake: (() => void) | undefined
}
/** The calls still waiting after an exchange; when they all wait for a recall, until when at most. */
type Served = { kept: Waiter[]; parkUntilMs: number | undefined }
type BySubject = Map<string, { waitMs: number; found: DayCounter; othersFree: number }>

/**
 * The bank side of a shared meter: one desk per account queues the calls its lease could not admit
 * and runs one exchange at a time (leases for the waiting calls, reports of what was spent and is
 * held); without Redis, serves by `onBankDown` (docs/operations.md, Credits across instances).
 */
export function createLeaseDesks(
  ledger: LocalLedger,
  { bank, store, onBankDown, leaseSeconds, idleMs, recallMs, onError }: LeaseDesksOptions,
): LeaseDesks {
  const desks = new Map<string, Desk>()
  /** Subjects another instance asked this one to give its free credits back for, with their day. */
  const recalled = new Map<string, string>()
  const keysOfAccount = new Map<string, Map<string, MeterSubject>>()
  const fallback = createBankDownFallback(ledger, { onBankDown, borrow })
  let bankUp = true
  let lastBankOkMs = ledger.now()
  let closing = false

  function enqueue(subject: MeterSubject, waiter: Waiter | undefined): void {
    let keys = keysOfAccount.get(subject.accountCounter)
    if (keys === undefined) {
      keys = new Map()
      keysOfAccount.set(subject.accountCounter, keys)
    }
    keys.set(subject.keyCounter, subject)
    let desk = desks.get(subject.accountCounter)
    if (desk === undefined) {
      desk = { waiters: [], sync: false, running: undefined, wake: undefined }
      desks.set(subject.accountCounter, desk)
    }
    if (waiter) desk.waiters.push(waiter)
    else desk.sync = true
    // a parked desk serves a new call (or a report) at once: the parked calls keep their recallUntil
    desk.wake?.()
    if (desk.running === undefined) desk.running = runDesk(subject.accountCounter, desk)
  }

  /** Serves the desk until nothing waits; marks it idle in the same step that finds it empty. */
  async function runDesk(accountCounter: string, desk: Desk): Promise<void> {
    try {
      while (desk.waiters.length > 0 || desk.sync) {
        const waiters = desk.waiters
        desk.waiters = []
        desk.sync = false
        let served: Served = { kept: [], parkUntilMs: undefined }
        try {
          served = await serve(accountCounter, waiters)
        } catch (err) {
          for (const waiter of waiters) waiter.reject(err)
        }
        desk.waiters.unshift(...served.kept)
        // the calls left wait for a recall: until credits come back, a report is due, a new call
        // comes, or the bound
        if (served.parkUntilMs !== undefined && !desk.sync && desk.waiters.length === served.kept.length) {
          await park(desk, served.parkUntilMs)
        }
      }
    } finally {
      desk.running = undefined
    }
  }

  /** Waits until `untilMs` at most; `desk.wake` ends the wait sooner. */
  function park(desk: Desk, untilMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        desk.wake = undefined
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, untilMs - ledger.now()))
      desk.wake = done
    })
  }

  /** What one exchange asks for and reports (createBankRequest.ts); undefined when the account is unknown. */
  function build(
    accountCounter: string,
    waiters: Waiter[],
    returning: Set<string>,
  ): BankRequestBuilt | undefined {
    const keys = keysOfAccount.get(accountCounter)
    const account = waiters[0]?.subject ?? keys?.values().next().value
    if (account === undefined) return undefined
    return createBankRequest(ledger, {
      accountCounter,
      account,
      keys: keys?.values() ?? [],
      waiters,
      returning,
      closing,
      idleMs,
      leaseSeconds,
    })
  }

  /** The account's subjects (its own, its keys') recalled for their current day; no longer recalled. */
  function takeRecalled(accountCounter: string): Set<string> {
    const taken = new Set<string>()
    for (const subjectId of [accountCounter, ...(keysOfAccount.get(accountCounter)?.keys() ?? [])]) {
      const day = recalled.get(subjectId)
      if (day === undefined) continue
      recalled.delete(subjectId)
      if (ledger.counters.get(subjectId)?.day === day) taken.add(subjectId)
    }
    return taken
  }

  /** One exchange for an account, its keys and the calls waiting; answers the calls still waiting. */
  async function serve(accountCounter: string, waiters: Waiter[]): Promise<Served> {
    const returning = takeRecalled(accountCounter)
    let built = build(accountCounter, waiters, returning)
    if (built === undefined) return { kept: waiters, parkUntilMs: undefined }
    let reply: BankReply
    try {
      reply = await bank.exchange({ subjects: built.requests })
      if (reply.needsSeed) {
        // the day's figure in the store and what this process wrote into it, read at one moment
        built = await ledger.exclusive(async () => {
          const seeds = await store.loadDailyUsage(ledger.day())
          const again = build(accountCounter, waiters, returning) as BankRequestBuilt
          for (const request of again.requests) request.seedCredits = seeds.get(request.subject) ?? 0
          return again
        })
        reply = await bank.exchange({ subjects: built.requests })
      }
      if (reply.needsSeed) throw new Error('the credit bank asked for a seed twice')
    } catch (err) {
      // still to give back: with the next exchange that gets through
      for (const subjectId of returning) recalled.set(subjectId, ledger.counter(subjectId).day)
      bankDown(err)
      for (const waiter of waiters) serveWithoutBank(waiter)
      return { kept: [], parkUntilMs: undefined }
    }
    const { requests, entries } = built
    const answeredMs = ledger.now()
    bankIsUp(answeredMs)
    if (returning.size > 0) {
      const day = ledger.counter(accountCounter).day
      bank.notify({ kind: 'returned', account: accountCounter, subjects: [...returning], day })
    }
    const bySubject: BySubject = new Map()
    reply.subjects.forEach((answer, index) => {
      const entry = entries[index] as BankRequestEntry
      const request = requests[index] as BankSubjectRequest
      // held credits the bank no longer counts (it lost them, and they no longer fit) are dropped
      const dropped = Math.min(
        request.heldCredits - answer.heldCredits,
        entry.counter.leased - entry.counter.used - entry.counter.reserved,
      )
      if (dropped > 0 && request.dailyLimit >= 0) entry.counter.leased -= dropped
      entry.counter.leased += answer.leasedCredits
      entry.counter.granted = answer.grantedCredits
      entry.counter.unsent -= entry.sentUnsent
      entry.counter.reportedUsed = request.usedCredits
      entry.counter.reportedFree = Math.min(request.freeCredits, answer.heldCredits) + answer.leasedCredits
      entry.counter.refresh = request.returning
      entry.slice?.returned(request.rateReturnedCredits)
      entry.slice?.add(answer.rateGrantedCredits, answeredMs)
      bySubject.set(entry.subject, {
        waitMs: answer.rateWaitMs,
        found: entry.counter,
        othersFree: answer.othersFreeCredits,
      })
    })

    const kept: Waiter[] = []
    const parked: Waiter[] = []
    /** Subjects a call started waiting for a recall of in this exchange: the others are asked once. */
    const recalls = new Set<string>()
    let parkUntilMs: number | undefined
    for (const waiter of waiters) {
      const nowMs = ledger.now()
      const { subject, costCredits } = waiter
      const refusal = ledger.refusalOf(subject, costCredits, nowMs)
      if (refusal === undefined) {
        waiter.resolve(ledger.hold(subject, costCredits, nowMs))
        continue
      }
      const onKey = refusal.check === 'key' || refusal.check === 'keyRate'
      const answer = bySubject.get(onKey ? subject.keyCounter : subject.accountCounter)
      let final: TollgateError | undefined
      if (refusal.check === 'account' || refusal.check === 'key') {
        const limit = refusal.check === 'key' ? (subject.keyDailyCredits ?? 0) : subject.accountDailyCredits
        const left = answer === undefined ? 0 : ledger.left(answer.found, limit, nowMs)
        if (answer !== undefined && left < costCredits && left + answer.othersFree >= costCredits) {
          // it fits only with credits other instances hold unspent: they are asked for them, and
          // the call waits (at most recallMs) for them to come back
          if (!closing && (waiter.recallUntil === undefined || nowMs < waiter.recallUntil)) {
            if (waiter.recallUntil === undefined) {
              waiter.recallUntil = nowMs + recallMs
              recalls.add(onKey ? subject.keyCounter : subject.accountCounter)
            }
            parkUntilMs = Math.min(parkUntilMs ?? waiter.recallUntil, waiter.recallUntil)
            parked.push(waiter)
            continue
          }
        }
        // it fits in neither this lease, nor what the bank has left, nor what others gave back: refused
        if (left < costCredits) final = refusal.error
      } else if (answer !== undefined && answer.waitMs > 0) {
        const kind = refusal.check === 'keyRate' ? 'keyCreditsPerSecond' : 'planCreditsPerSecond'
        final = new RateLimitError(kind, answer.waitMs)
      }
      if (final) waiter.reject(final)
      else kept.push(waiter)
    }
    if (recalls.size > 0) {
      const day = ledger.counter(accountCounter).day
      bank.notify({ kind: 'recall', account: accountCounter, subjects: [...recalls], day })
    }
    // each exchange serves or refuses someone (or starts a recall); should one not, the calls that
    // do not wait for a recall do not ask for ever (parked ones are bounded by their recallUntil)
    if (kept.length + parked.length === waiters.length && recalls.size === 0) {
      for (const waiter of kept) waiter.rounds++
      for (const waiter of kept.filter((each) => each.rounds > 4))
        waiter.reject(ledger.refusalOf(waiter.subject, waiter.costCredits, ledger.now())?.error)
    }
    const asking = kept.filter((waiter) => waiter.rounds <= 4)
    if (asking.length === 0 && parked.length === 0) returnUnspentDebts(entries, waiters[0]?.subject)
    // calls kept for another reason ask again at once; the parked ones with them
    return { kept: [...parked, ...asking], parkUntilMs: asking.length === 0 ? parkUntilMs : undefined }
  }

  /**
   * A grant into debt (a call dearer than a second's worth) whose call was refused on another limit
   * (the key's bucket granted it, the account's did not) goes back to the bank at once: one process
   * takes from neither bucket then.
   */
  function returnUnspentDebts(entries: BankRequestEntry[], subject: MeterSubject | undefined): void {
    const nowMs = ledger.now()
    let returning = false
    for (const entry of entries) if (entry.slice?.returnUnspentDebt(nowMs)) returning = true
    if (returning && subject !== undefined) enqueue(subject, undefined)
  }

  /** Redis cannot be reached: the call is admitted or refused by `onBankDown` (createBankDownFallback.ts). */
  function serveWithoutBank(waiter: Waiter): void {
    try {
      waiter.resolve(fallback.admit(waiter.subject, waiter.costCredits))
    } catch (err) {
      waiter.reject(err)
    }
  }

  /** Whether a call gave back per-second credits its slice could not keep: they go back to the bank at once. */
  function returnsRate(subject: MeterSubject): boolean {
    const nowMs = ledger.now()
    const account = ledger.slice(subject.accountCounter, subject.accountCreditsPerSecond, nowMs)
    if (account.returningCredits() > 0) return true
    if (subject.keyCreditsPerSecond === undefined) return false
    return ledger.slice(subject.keyCounter, subject.keyCreditsPerSecond, nowMs).returningCredits() > 0
  }

  function borrow(found: DayCounter, limit: number, credits: number): boolean {
    if (credits > limit - found.granted - found.unsent) return false
    found.leased += credits
    found.unsent += credits
    return true
  }

  function bankDown(err: unknown): void {
    if (bankUp)
      onError?.(new Error(`credit bank unreachable; metering.onRedisDown is ${onBankDown}`, { cause: err }))
    bankUp = false
  }

  function bankIsUp(nowMs: number): void {
    bankUp = true
    lastBankOkMs = nowMs
  }

  /** Reports every account that holds a lease or has spent since its last report (also renews leases). */
  function reportAll(): void {
    const day = ledger.day()
    const due = (subjectId: string) => {
      const found = ledger.counters.get(subjectId)
      if (found === undefined || found.day !== day) return false
      return (
        found.leased !== found.used ||
        found.used !== found.reportedUsed ||
        found.unsent !== 0 ||
        found.refresh
      )
    }
    for (const keys of keysOfAccount.values()) {
      const [first] = keys.values()
      if (first === undefined) continue
      // the account's exchange carries its keys that have balances of their own
      const owned = [...keys.values()].filter((subject) => subject.keyDailyCredits !== undefined)
      if ([first.accountCounter, ...owned.map((subject) => subject.keyCounter)].some(due)) {
        enqueue(first, undefined)
      }
    }
  }

  /**
   * Another instance would refuse a call that fits with credits this one holds unspent: they go back
   * with the account's next exchange, at once (also when the bank still counts credits this one has
   * spent since: the report corrects it). Credits back elsewhere wake this instance's parked calls.
   */
  function onNotice(notice: LeaseNotice): void {
    if (notice.kind === 'returned') {
      desks.get(notice.account)?.wake?.()
      return
    }
    const first = keysOfAccount.get(notice.account)?.values().next().value
    if (first === undefined || closing) return
    let any = false
    for (const subjectId of notice.subjects) {
      const found = ledger.counters.get(subjectId)
      if (found === undefined || found.day !== notice.day) continue
      if (found.leased - found.used - found.reserved > 0 || found.reportedFree > 0) {
        recalled.set(subjectId, notice.day)
        any = true
      }
    }
    if (any) enqueue(first, undefined)
  }
  bank.onNotice(onNotice)

  return {
    wait: (subject, costCredits) =>
      new Promise((resolve, reject) =>
        enqueue(subject, { subject, costCredits, rounds: 0, recallUntil: undefined, resolve, reject }),
      ),
    borrow,
    report: (subject) => enqueue(subject, undefined),
    refunded(subject) {
      const balances: [string, number | undefined, boolean][] = [
        [subject.accountCounter, subject.accountDailyCredits, true],
        [subject.keyCounter, subject.keyDailyCredits, false],
      ]
      const understated = balances.some(([subjectId, limit, isAccount]) => {
        const found = ledger.counters.get(subjectId)
        if (found === undefined || limit === undefined) return false
        const pool = limit - found.granted - found.unsent
        return (
          pool < 4 * fullLeaseOf(subject, isAccount, leaseSeconds) &&
          found.leased - found.used - found.reserved > found.reportedFree
        )
      })
      if (understated || returnsRate(subject)) enqueue(subject, undefined)
    },
    reportAll,
    leaseValid: (nowMs) => onBankDown === 'open' || bankUp || nowMs - lastBankOkMs < bank.leaseTtlMs,
    isUp: () => bankUp,
    async close() {
      closing = true
      reportAll()
      for (const desk of desks.values()) desk.wake?.()
      await Promise.all([...desks.values()].map((desk) => desk.running))
    },
  }
}
