import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { answerWaitingCalls, type SubjectAnswer, type WaitingCall } from './answerWaitingCalls.ts'
import type { BankHealth } from './BankHealth.ts'
import { createBankDownFallback } from './createBankDownFallback.ts'
import {
  type BankRequestBuilt,
  type BankRequestEntry,
  createBankRequest,
  fullLeaseOf,
} from './createBankRequest.ts'
import type { BankReply, BankSubjectRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import type { LocalLedger } from './LocalLedger.ts'
import type { Admission, MeterSubject } from './meterTypes.ts'
import type { UsageStore } from './usageStore.ts'

export type BankClientOptions = {
  bank: CreditBank
  health: BankHealth
  store: UsageStore
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
  /** Of a subject's day, what this process has written to the usage store (createUsageBuffer.ts). */
  flushedCredits(subject: string, day: string): number
  /** Runs `work` while no usage flush runs (so the store and flushedCredits agree). */
  exclusive<T>(work: () => Promise<T>): Promise<T>
  timers?: Timers | undefined
}

export type BankClient = {
  /** Admits a call this process's lease could not: after one exchange with the bank (batched per account). */
  admit(subject: MeterSubject, costCredits: number): Promise<Admission>
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
  /** Gives every lease back, and waits for it. */
  close(): Promise<void>
}

/**
 * One account's line to the bank: one exchange at a time (its keys included), so reports never
 * cross; the calls that come meanwhile share the next one.
 */
type AccountQueue = {
  calls: WaitingCall[]
  /** A report is due even if no call waits. */
  reportDue: boolean
  running: Promise<void> | undefined
  /** Ends the wait of calls parked on a recall (credits came back, a report is due, or closing). */
  wake: (() => void) | undefined
}

/**
 * The bank side of a shared meter: one queue per account holds the calls its lease could not admit
 * and runs one exchange at a time (leases for the waiting calls, reports of what was spent and is
 * held); at the end of a balance, recalls what other instances hold unspent; without the bank,
 * serves by `onBankDown` (docs/design/metering.md).
 */
export function createBankClient(ledger: LocalLedger, options: BankClientOptions): BankClient {
  const { bank, health, store, leaseSeconds, idleMs, recallMs, flushedCredits, exclusive } = options
  const timers = options.timers ?? systemTimers
  const queues = new Map<string, AccountQueue>()
  /** Subjects another instance asked this one to give its free credits back for, with their day. */
  const recalled = new Map<string, string>()
  const keysOfAccount = new Map<string, Map<string, MeterSubject>>()
  const fallback = createBankDownFallback(ledger, health.onBankDown)
  let closing = false

  function enqueue(subject: MeterSubject, call: WaitingCall | undefined): void {
    let keys = keysOfAccount.get(subject.accountCounter)
    if (keys === undefined) {
      keys = new Map()
      keysOfAccount.set(subject.accountCounter, keys)
    }
    keys.set(subject.keyCounter, subject)
    let queue = queues.get(subject.accountCounter)
    if (queue === undefined) {
      queue = { calls: [], reportDue: false, running: undefined, wake: undefined }
      queues.set(subject.accountCounter, queue)
    }
    if (call) queue.calls.push(call)
    else queue.reportDue = true
    // a parked queue serves a new call (or a report) at once: the parked calls keep their recallUntil
    queue.wake?.()
    if (queue.running === undefined) queue.running = drain(subject.accountCounter, queue)
  }

  /** Serves the queue until nothing waits; marks it idle in the same step that finds it empty. */
  async function drain(accountCounter: string, queue: AccountQueue): Promise<void> {
    try {
      while (queue.calls.length > 0 || queue.reportDue) {
        const calls = queue.calls
        queue.calls = []
        queue.reportDue = false
        let served: Served = { kept: [], parkUntilMs: undefined }
        try {
          served = await exchange(accountCounter, calls)
        } catch (err) {
          for (const call of calls) call.reject(err)
        }
        queue.calls.unshift(...served.kept)
        // the calls left wait for a recall: until credits come back, a report is due, a new call
        // comes, or the bound
        if (
          served.parkUntilMs !== undefined &&
          !queue.reportDue &&
          queue.calls.length === served.kept.length
        ) {
          await park(queue, served.parkUntilMs)
        }
      }
    } finally {
      queue.running = undefined
    }
  }

  /** Waits until `untilMs` at most; `queue.wake` ends the wait sooner. */
  function park(queue: AccountQueue, untilMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        timers.clearTimeout(timer)
        queue.wake = undefined
        resolve()
      }
      const timer = timers.setTimeout(done, Math.max(0, untilMs - ledger.now()))
      queue.wake = done
    })
  }

  /** What one exchange asks for and reports (createBankRequest.ts); undefined when the account is unknown. */
  function build(
    accountCounter: string,
    calls: WaitingCall[],
    returning: Set<string>,
  ): BankRequestBuilt | undefined {
    const keys = keysOfAccount.get(accountCounter)
    const account = calls[0]?.subject ?? keys?.values().next().value
    if (account === undefined) return undefined
    return createBankRequest(ledger, {
      accountCounter,
      account,
      keys: keys?.values() ?? [],
      calls,
      returning,
      closing,
      idleMs,
      leaseSeconds,
      flushedCredits,
    })
  }

  /** The account's subjects (its own, its keys') recalled for their current day; no longer recalled. */
  function takeRecalled(accountCounter: string): Set<string> {
    const taken = new Set<string>()
    for (const subjectId of [accountCounter, ...(keysOfAccount.get(accountCounter)?.keys() ?? [])]) {
      const day = recalled.get(subjectId)
      if (day === undefined) continue
      recalled.delete(subjectId)
      if (ledger.balances.get(subjectId)?.day === day) taken.add(subjectId)
    }
    return taken
  }

  /** Each request's day from the store (one with a daily limit): its figure and each instance's share of it. */
  async function seed(requests: BankSubjectRequest[]): Promise<void> {
    const daily = requests.filter((request) => request.dailyLimit >= 0)
    for (const day of new Set(daily.map((request) => request.day))) {
      const ofDay = daily.filter((request) => request.day === day)
      const seeds = await store.loadDaySeeds(
        day,
        ofDay.map((request) => request.subject),
      )
      for (const request of ofDay) {
        const found = seeds.get(request.subject)
        request.seedCredits = found?.credits ?? 0
        request.seedInstances = found?.instances ?? {}
      }
    }
  }

  /** One exchange for an account, its keys and the calls waiting; answers the calls still waiting. */
  async function exchange(accountCounter: string, calls: WaitingCall[]): Promise<Served> {
    const returning = takeRecalled(accountCounter)
    let built = build(accountCounter, calls, returning)
    if (built === undefined) return { kept: calls, parkUntilMs: undefined }
    let reply: BankReply
    try {
      reply = await bank.exchange({ subjects: built.requests })
      if (reply.needsSeed) {
        // the day's figures in the store, each instance's share of them and what this process
        // wrote into it, read at one moment (no flush meanwhile), for the subjects asked now
        built = await exclusive(async () => {
          const again = build(accountCounter, calls, returning) as BankRequestBuilt
          await seed(again.requests)
          return again
        })
        reply = await bank.exchange({ subjects: built.requests })
      }
      if (reply.needsSeed) throw new Error('the credit bank asked for a seed twice')
    } catch (err) {
      // still to give back: with the next exchange that gets through
      for (const subjectId of returning) recalled.set(subjectId, ledger.balance(subjectId).day)
      health.failed(err)
      for (const call of calls) serveWithoutBank(call)
      return { kept: [], parkUntilMs: undefined }
    }
    const { requests, entries } = built
    const answeredMs = ledger.now()
    health.answered(answeredMs)
    if (returning.size > 0) {
      const day = ledger.balance(accountCounter).day
      bank.notify({ kind: 'returned', account: accountCounter, subjects: [...returning], day })
    }
    const answers = new Map<string, SubjectAnswer>()
    reply.subjects.forEach((answer, index) => {
      const entry = entries[index] as BankRequestEntry
      const request = requests[index] as BankSubjectRequest
      const found = entry.balance
      found.recordExchange(request, answer, entry.sentUnsent)
      entry.slice?.returned(request.rateReturnedCredits)
      entry.slice?.add(answer.rateGrantedCredits, answeredMs)
      answers.set(entry.subject, {
        waitMs: answer.rateWaitMs,
        balance: found,
        othersFreeCredits: answer.othersFreeCredits,
      })
    })
    const { asking, parked, recalls, parkUntilMs } = answerWaitingCalls(ledger, calls, answers, {
      recallMs,
      closing,
    })
    if (recalls.size > 0) {
      const day = ledger.balance(accountCounter).day
      bank.notify({ kind: 'recall', account: accountCounter, subjects: [...recalls], day })
    }
    if (asking.length === 0 && parked.length === 0) returnUnspentDebts(entries, calls[0]?.subject)
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

  /** The bank cannot be reached: the call is admitted or refused by `onBankDown` (createBankDownFallback.ts). */
  function serveWithoutBank(call: WaitingCall): void {
    try {
      call.resolve(fallback.admit(call.subject, call.costCredits))
    } catch (err) {
      call.reject(err)
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

  /** Reports every account that holds a lease or has spent since its last report (also renews leases). */
  function reportAll(): void {
    const day = ledger.day()
    const due = (subjectId: string) => {
      const found = ledger.balances.get(subjectId)
      return found !== undefined && found.day === day && found.isReportDue()
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
      queues.get(notice.account)?.wake?.()
      return
    }
    const first = keysOfAccount.get(notice.account)?.values().next().value
    if (first === undefined || closing) return
    let any = false
    for (const subjectId of notice.subjects) {
      const found = ledger.balances.get(subjectId)
      if (found === undefined || found.day !== notice.day) continue
      if (found.free() > 0 || found.reportedFree > 0) {
        recalled.set(subjectId, notice.day)
        any = true
      }
    }
    if (any) enqueue(first, undefined)
  }
  bank.onNotice(onNotice)

  return {
    admit: (subject, costCredits) =>
      new Promise((resolve, reject) =>
        enqueue(subject, { subject, costCredits, rounds: 0, recallUntil: undefined, resolve, reject }),
      ),
    report: (subject) => enqueue(subject, undefined),
    refunded(subject) {
      const balances: [string, number | undefined, boolean][] = [
        [subject.accountCounter, subject.accountDailyCredits, true],
        [subject.keyCounter, subject.keyDailyCredits, false],
      ]
      const understated = balances.some(([subjectId, limit, isAccount]) => {
        const found = ledger.balances.get(subjectId)
        if (found === undefined || limit === undefined) return false
        return (
          found.poolLeft(limit) < 4 * fullLeaseOf(subject, isAccount, leaseSeconds) &&
          found.free() > found.reportedFree
        )
      })
      if (understated || returnsRate(subject)) enqueue(subject, undefined)
    },
    reportAll,
    async close() {
      closing = true
      reportAll()
      for (const queue of queues.values()) queue.wake?.()
      await Promise.all([...queues.values()].map((queue) => queue.running))
    },
  }
}

/** The calls still waiting after an exchange; when they all wait for a recall, until when at most. */
type Served = { kept: WaitingCall[]; parkUntilMs: number | undefined }
