import { randomUUID } from 'node:crypto'
import type { ApiKey } from '../auth/apiKey.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import { utcDay } from '../metering/clock.ts'
import type { MeterSubject } from '../metering/meterTypes.ts'
import { accountSubject, type DailyUsage, keySubject, type UsageStore } from '../metering/usageStore.ts'
import type { AlertPayload } from './alertPayload.ts'
import type { AlertSettings } from './alertSettings.ts'
import type { AlertEventKind, AlertStore } from './alertStore.ts'
import { crossedThresholds } from './crossedThresholds.ts'

export type AlertWatcherDeps = {
  store: AlertStore
  /** The ledger: the credits of the subjects just written, as every instance wrote them so far. */
  usage: Pick<UsageStore, 'loadSubjectsUsage'>
  /** Every active key's meter subject: the daily limits, the account's and the key's own (KeyRegistry). */
  subjects: () => Iterable<MeterSubject>
  /** An account's keys, with the account (names for the events; KeyStore.listAccountKeys). */
  accountKeys: (accountId: number) => Promise<ApiKey[]>
  now: () => number
  /** An event was made here: its delivery is due now. */
  onEvent: () => void
  onError: (err: unknown) => void
}

export type AlertWatcher = {
  /** Daily usage the meter has just written: looked at after this returns, never on a call's path. */
  usageWritten(daily: readonly DailyUsage[]): void
  /** A call the meter refused: a key's first per-second refusal of the day is an event. */
  refused(subject: MeterSubject, err: unknown): void
  /** Settles once everything noted so far has been looked at. */
  idle(): Promise<void>
}

/** How long a key refused while its account had no alerts is not looked at again. */
const noAlertsRecheckMs = 10_000

type RateRefusal = { day: string; accountId: number; keyId: number }

/**
 * Finds usage alert events off the request path: after each write of usage, the ledger's totals of
 * the subjects just written (every instance's, read from the database) are compared with their
 * daily limits and the account's thresholds; a key's first per-second refusal of a day is noted
 * in memory and looked at likewise. Each event found is offered to the database, whose unique
 * constraint decides whether it is new (once per account, key, kind, threshold and day across every
 * instance and restart); only the instance that made it has it delivered. What this instance has
 * seen is kept per day, so the database is asked once per threshold, not at every write.
 */
export function createAlertWatcher(deps: AlertWatcherDeps): AlertWatcher {
  const { store, now, onError } = deps
  /** Subjects written since the last look, by day. */
  let pendingUsage = new Map<string, Set<string>>()
  /** Keys refused for their rate since the last look, by `day|keyId`. */
  let pendingRate = new Map<string, RateRefusal>()
  /** Events this instance knows exist (made here or elsewhere), by day: `subject|kind|threshold`. */
  const known = new Map<string, Set<string>>()
  /** Keys whose rate refusal was noted, by day: until when it is not noted again. */
  const rateNoted = new Map<string, Map<number, number>>()
  let running: Promise<void> | undefined

  function dayEntry<T>(map: Map<string, T>, day: string, make: () => T): T {
    let found = map.get(day)
    if (found === undefined) {
      found = make()
      map.set(day, found)
      // a day before yesterday has nothing left to decide: its entries go
      const oldest = utcDay(now() - 2 * 86_400_000)
      for (const kept of map.keys()) if (kept < oldest) map.delete(kept)
    }
    return found
  }

  function schedule(): void {
    running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain)
  }

  async function drain(): Promise<void> {
    try {
      while (pendingUsage.size > 0 || pendingRate.size > 0) {
        const usage = pendingUsage
        const rate = [...pendingRate.values()]
        pendingUsage = new Map()
        pendingRate = new Map()
        try {
          await look(usage, rate)
        } catch (err) {
          // the subjects come back with their next write; the refusals with their next refusal
          for (const refusal of rate) rateNoted.get(refusal.day)?.delete(refusal.keyId)
          onError(err)
        }
      }
    } finally {
      running = undefined
    }
  }

  async function look(usage: Map<string, Set<string>>, rate: RateRefusal[]): Promise<void> {
    const accountLimits = new Map<number, number>()
    const keyLimits = new Map<number, { accountId: number; limit: number }>()
    for (const subject of deps.subjects()) {
      accountLimits.set(subject.accountId, subject.accountDailyCredits)
      if (subject.keyDailyCredits !== undefined)
        keyLimits.set(subject.keyId, { accountId: subject.accountId, limit: subject.keyDailyCredits })
    }
    /** Each subject to compare: whose account, its limit, and its key (0: the account's own). */
    const watched = (subject: string) => {
      const [kind, id] = subject.split(':')
      const number = Number(id)
      if (kind === 'account' && accountLimits.has(number))
        return { accountId: number, keyId: 0, limit: accountLimits.get(number) as number }
      const key = kind === 'key' ? keyLimits.get(number) : undefined
      return key && { accountId: key.accountId, keyId: number, limit: key.limit }
    }
    const accounts = new Set<number>(rate.map((refusal) => refusal.accountId))
    for (const subjects of usage.values())
      for (const subject of subjects) {
        const found = watched(subject)
        if (found) accounts.add(found.accountId)
      }
    if (accounts.size === 0) return
    const settings = new Map((await store.listSettings([...accounts])).map((s) => [s.accountId, s]))
    const names = new Map<number, Promise<ApiKey[]>>()
    const keysOf = (accountId: number) => {
      let found = names.get(accountId)
      if (!found) {
        found = deps.accountKeys(accountId)
        names.set(accountId, found)
      }
      return found
    }
    const make = async (
      base: { accountId: number; keyId: number; kind: AlertEventKind; threshold: number; day: string },
      figures: { creditsUsed: number; creditLimit: number | null },
    ) => {
      const keys = await keysOf(base.accountId)
      const account = keys[0]?.account.name
      if (account === undefined) return
      const key = base.keyId === 0 ? undefined : keys.find((found) => found.id === base.keyId)
      const id = randomUUID()
      const createdAtMs = now()
      const payload: AlertPayload = {
        id,
        account,
        key: key === undefined ? null : key.name || `key ${key.id}`,
        event: base.kind,
        threshold: base.kind === 'credits' ? base.threshold : null,
        ...figures,
        day: base.day,
        time: new Date(createdAtMs).toISOString(),
      }
      const made = await store.addEvent({ ...base, id, payload: JSON.stringify(payload), createdAtMs })
      if (made) deps.onEvent()
    }

    for (const [day, subjects] of usage) {
      const compared = [...subjects].flatMap((subject) => {
        const found = watched(subject)
        const alerts = found && settings.get(found.accountId)
        return found && alerts ? [{ subject, ...found, alerts }] : []
      })
      if (compared.length === 0) continue
      const totals = await deps.usage.loadSubjectsUsage(
        day,
        compared.map((entry) => entry.subject),
      )
      const seen = dayEntry(known, day, () => new Set<string>())
      for (const entry of compared) {
        const used = totals.get(entry.subject) ?? 0
        for (const threshold of crossedThresholds(entry.alerts.thresholds, used, entry.limit)) {
          const mark = `${entry.subject}|credits|${threshold}`
          if (seen.has(mark)) continue
          const { accountId, keyId } = entry
          await make(
            { accountId, keyId, kind: 'credits', threshold, day },
            { creditsUsed: used, creditLimit: entry.limit },
          )
          seen.add(mark)
        }
      }
    }

    for (const refusal of rate) {
      const alerts: AlertSettings | undefined = settings.get(refusal.accountId)
      if (!alerts) {
        // looked at again on a refusal after a while: alerts may be turned on meanwhile
        rateNoted.get(refusal.day)?.set(refusal.keyId, now() + noAlertsRecheckMs)
        continue
      }
      const own = keyLimits.get(refusal.keyId)
      const subject = own ? keySubject(refusal.keyId) : accountSubject(refusal.accountId)
      const totals = await deps.usage.loadSubjectsUsage(refusal.day, [subject])
      await make(
        {
          accountId: refusal.accountId,
          keyId: refusal.keyId,
          kind: 'rate_limited',
          threshold: 0,
          day: refusal.day,
        },
        {
          creditsUsed: totals.get(subject) ?? 0,
          creditLimit: own ? own.limit : (accountLimits.get(refusal.accountId) ?? null),
        },
      )
    }
  }

  return {
    usageWritten(daily) {
      if (daily.length === 0) return
      for (const row of daily) dayEntry(pendingUsage, row.day, () => new Set<string>()).add(row.subject)
      schedule()
    },
    refused(subject, err) {
      if (!(err instanceof RateLimitError) || err.kind === 'keyCreditsPerDay') return
      const nowMs = now()
      const day = utcDay(nowMs)
      const noted = dayEntry(rateNoted, day, () => new Map<number, number>())
      if ((noted.get(subject.keyId) ?? 0) > nowMs) return
      noted.set(subject.keyId, Number.POSITIVE_INFINITY)
      pendingRate.set(`${day}|${subject.keyId}`, { day, accountId: subject.accountId, keyId: subject.keyId })
      schedule()
    },
    async idle() {
      while (running) await running
    },
  }
}
