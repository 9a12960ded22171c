import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import { ShareCutoff } from './ShareCutoff.ts'
import {
  daySeedsOf,
  type HourlyUsage,
  type UsageDelta,
  type UsageRow,
  type UsageStore,
} from './usageStore.ts'

export function createSqliteUsageStore(db: SqliteDatabase): UsageStore {
  const selectDay = db.prepare<[string], { subject: string; credits: number }>(
    'SELECT subject, credits FROM usage_daily WHERE day = ?',
  )
  const addDaily = db.prepare<[string, string, number]>(
    `INSERT INTO usage_daily (subject, day, credits) VALUES (?, ?, ?)
     ON CONFLICT (subject, day) DO UPDATE SET credits = credits + excluded.credits`,
  )
  const addHourly = db.prepare<[number, string, string, string, number, number, number]>(
    `INSERT INTO usage_hourly (key_id, network, method, hour, calls, credits, failover_calls) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (key_id, network, method, hour) DO UPDATE SET
       calls = calls + excluded.calls, credits = credits + excluded.credits,
       failover_calls = failover_calls + excluded.failover_calls`,
  )
  const usageQuery = `
    SELECT substr(hour, 1, 10) AS day, key_id AS keyId, network, method, sum(calls) AS calls,
           sum(credits) AS credits, sum(failover_calls) AS failoverCalls
    FROM usage_hourly WHERE hour >= ? AND (? IS NULL OR key_id = ?)
    GROUP BY day, key_id, network, method ORDER BY day, key_id, network, method`
  const selectSubjects = db.prepare<[string, string], { subject: string; credits: number }>(
    'SELECT subject, credits FROM usage_daily WHERE day = ? AND subject IN (SELECT value FROM json_each(?))',
  )
  const selectSeeds = db.prepare<
    [string, string],
    { subject: string; credits: number; instance: string | null; instanceCredits: number }
  >(
    `SELECT d.subject, d.credits, i.instance, coalesce(i.credits, 0) AS instanceCredits
     FROM usage_daily d LEFT JOIN usage_instance_daily i ON i.day = d.day AND i.subject = d.subject
     WHERE d.day = ? AND d.subject IN (SELECT value FROM json_each(?))`,
  )
  const addInstanceDaily = db.prepare<[string, string, string, number]>(
    `INSERT INTO usage_instance_daily (day, subject, instance, credits) VALUES (?, ?, ?, ?)
     ON CONFLICT (day, subject, instance) DO UPDATE SET credits = credits + excluded.credits`,
  )
  const dropShares = db.prepare<[string]>('DELETE FROM usage_instance_daily WHERE day < ?')
  const selectUsage = db.prepare<[string, number | null, number | null], UsageRow>(usageQuery)
  const selectHourly = db.prepare<[string, number | null, number | null], HourlyUsage>(`
    SELECT hour, key_id AS keyId, network, method, calls, credits, failover_calls AS failoverCalls
    FROM usage_hourly WHERE hour >= ? AND (? IS NULL OR key_id = ?)
    ORDER BY hour, key_id, network, method`)

  const addBatchId = db.prepare<[string, number]>(
    'INSERT INTO usage_batches (id, added_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING',
  )
  const selectLedgerId = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE name = 'ledger_id'")

  function addRows(delta: UsageDelta): void {
    for (const row of delta.daily) addDaily.run(row.subject, row.day, row.credits)
    const { instance } = delta
    if (instance !== undefined) {
      for (const row of delta.daily) addInstanceDaily.run(row.day, row.subject, instance, row.credits)
    }
    for (const row of delta.hourly) {
      addHourly.run(row.keyId, row.network, row.method, row.hour, row.calls, row.credits, row.failoverCalls)
    }
  }
  const add = db.transaction(addRows)
  const addOnce = db.transaction((batchId: string, delta: UsageDelta): boolean => {
    if (addBatchId.run(batchId, Date.now()).changes === 0) return false
    addRows(delta)
    return true
  })
  const cutoff = new ShareCutoff()

  return {
    async loadDailyUsage(day) {
      return new Map(selectDay.all(day).map((row) => [row.subject, row.credits]))
    },
    async loadSubjectsUsage(day, subjects) {
      if (subjects.length === 0) return new Map()
      return new Map(
        selectSubjects.all(day, JSON.stringify(subjects)).map((row) => [row.subject, row.credits]),
      )
    },
    async loadDaySeeds(day, subjects) {
      if (subjects.length === 0) return new Map()
      return daySeedsOf(selectSeeds.all(day, JSON.stringify(subjects)))
    },
    async addUsage(delta) {
      add(delta)
      await cutoff.afterWrite(delta, (before) => dropShares.run(before))
    },
    async addBatch(batchId, delta) {
      return addOnce(batchId, delta)
    },
    async getLedgerId() {
      const found = selectLedgerId.get()
      if (found === undefined) throw new Error('the database has no ledger id (run tollgate migrate)')
      return found.value
    },
    async queryUsage({ keyId, fromDay }) {
      return selectUsage.all(fromDay, keyId ?? null, keyId ?? null)
    },
    async queryHourlyUsage({ keyId, fromHour }) {
      return selectHourly.all(fromHour, keyId ?? null, keyId ?? null)
    },
  }
}
