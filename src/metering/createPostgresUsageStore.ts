import type { PoolClient } from 'pg'
import type { PostgresPool } from '../store/createPostgresPool.ts'
import { withTransaction } from '../store/withTransaction.ts'
import { ShareCutoff } from './ShareCutoff.ts'
import {
  type DailyUsage,
  daySeedsOf,
  type HourlyUsage,
  type UsageRow,
  type UsageStore,
} from './usageStore.ts'

type HourlyRow = {
  hour: string
  key_id: number
  network: string
  method: string
  /** bigint columns arrive as text */
  calls: string
  credits: string
  failover_calls: string
}

type UsageQueryRow = {
  day: string
  key_id: number
  network: string
  method: string
  /** sums of bigint columns arrive as text */
  calls: string
  credits: string
  failover_calls: string
}

/**
 * The usage ledger in PostgreSQL. addUsage (and addBatch) is one transaction of two upserts (one
 * statement per table, whatever the number of rows; a third for a bank instance's shares); rows go
 * in key order, so instances flushing at once lock the rows they share in the same order instead of
 * deadlocking.
 */
export function createPostgresUsageStore(pool: PostgresPool): UsageStore {
  const cutoff = new ShareCutoff()
  return {
    async loadDailyUsage(day) {
      const { rows } = await pool.query<{ subject: string; credits: string }>(
        'SELECT subject, credits FROM usage_daily WHERE day = $1',
        [day],
      )
      return new Map(rows.map((row) => [row.subject, Number(row.credits)]))
    },
    async loadSubjectsUsage(day, subjects) {
      if (subjects.length === 0) return new Map()
      const { rows } = await pool.query<{ subject: string; credits: string }>(
        'SELECT subject, credits FROM usage_daily WHERE day = $1 AND subject = ANY($2::text[])',
        [day, subjects],
      )
      return new Map(rows.map((row) => [row.subject, Number(row.credits)]))
    },
    async loadDaySeeds(day, subjects) {
      if (subjects.length === 0) return new Map()
      // one statement: the day's figures and the shares as of one snapshot
      const { rows } = await pool.query<{
        subject: string
        credits: string
        instance: string | null
        instance_credits: string
      }>(
        `SELECT d.subject, d.credits, i.instance, coalesce(i.credits, 0) AS instance_credits
         FROM usage_daily d LEFT JOIN usage_instance_daily i ON i.day = d.day AND i.subject = d.subject
         WHERE d.day = $1 AND d.subject = ANY($2::text[])`,
        [day, subjects],
      )
      return daySeedsOf(
        rows.map((row) => ({
          subject: row.subject,
          credits: Number(row.credits),
          instance: row.instance,
          instanceCredits: Number(row.instance_credits),
        })),
      )
    },
    async addUsage(delta) {
      const daily = mergeDaily(delta.daily)
      const hourly = mergeHourly(delta.hourly)
      if (daily.length === 0 && hourly.length === 0) return
      await withTransaction(pool, (client) => addRows(client, daily, hourly, delta.instance))
      await cutoff.afterWrite(delta, (before) =>
        pool.query('DELETE FROM usage_instance_daily WHERE day < $1', [before]),
      )
    },
    addBatch(batchId, delta) {
      const daily = mergeDaily(delta.daily)
      const hourly = mergeHourly(delta.hourly)
      return withTransaction(pool, async (client) => {
        const added = await client.query(
          'INSERT INTO usage_batches (id) VALUES ($1) ON CONFLICT (id) DO NOTHING',
          [batchId],
        )
        // recorded already: the batch's usage is in the ledger
        if (added.rowCount === 0) return false
        await addRows(client, daily, hourly, delta.instance)
        return true
      })
    },
    async getLedgerId() {
      const { rows } = await pool.query<{ value: string }>("SELECT value FROM meta WHERE name = 'ledger_id'")
      const found = rows[0]
      if (found === undefined) throw new Error('the database has no ledger id (run tollgate migrate)')
      return found.value
    },
    async queryUsage({ keyId, fromDay }) {
      const { rows } = await pool.query<UsageQueryRow>(
        `SELECT substr(hour, 1, 10) AS day, key_id, network, method, sum(calls) AS calls,
                sum(credits) AS credits, sum(failover_calls) AS failover_calls
         FROM usage_hourly WHERE hour >= $1 AND ($2::integer IS NULL OR key_id = $2)
         GROUP BY 1, key_id, network, method ORDER BY 1, key_id, network, method`,
        [fromDay, keyId ?? null],
      )
      return rows.map(
        (row): UsageRow => ({
          day: row.day,
          keyId: row.key_id,
          network: row.network,
          method: row.method,
          calls: Number(row.calls),
          credits: Number(row.credits),
          failoverCalls: Number(row.failover_calls),
        }),
      )
    },
    async queryHourlyUsage({ keyId, fromHour }) {
      const { rows } = await pool.query<HourlyRow>(
        `SELECT hour, key_id, network, method, calls, credits, failover_calls
         FROM usage_hourly WHERE hour >= $1 AND ($2::integer IS NULL OR key_id = $2)
         ORDER BY hour, key_id, network, method`,
        [fromHour, keyId ?? null],
      )
      return rows.map(
        (row): HourlyUsage => ({
          hour: row.hour,
          keyId: row.key_id,
          network: row.network,
          method: row.method,
          calls: Number(row.calls),
          credits: Number(row.credits),
          failoverCalls: Number(row.failover_calls),
        }),
      )
    },
  }
}

/**
 * The upserts of one delta, on a connection in a transaction: with the bank `instance` that wrote
 * it, its shares of the days' credits too.
 */
async function addRows(
  client: PoolClient,
  daily: DailyUsage[],
  hourly: HourlyUsage[],
  instance: string | undefined,
): Promise<void> {
  if (daily.length > 0) {
    await client.query(
      `INSERT INTO usage_daily (day, subject, credits)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
       ON CONFLICT (day, subject) DO UPDATE SET credits = usage_daily.credits + excluded.credits`,
      [daily.map((row) => row.day), daily.map((row) => row.subject), daily.map((row) => row.credits)],
    )
  }
  if (hourly.length > 0) {
    await client.query(
      `INSERT INTO usage_hourly (key_id, network, method, hour, calls, credits, failover_calls)
       SELECT * FROM unnest($1::integer[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
       ON CONFLICT (key_id, network, method, hour) DO UPDATE SET
         calls = usage_hourly.calls + excluded.calls,
         credits = usage_hourly.credits + excluded.credits,
         failover_calls = usage_hourly.failover_calls + excluded.failover_calls`,
      [
        hourly.map((row) => row.keyId),
        hourly.map((row) => row.network),
        hourly.map((row) => row.method),
        hourly.map((row) => row.hour),
        hourly.map((row) => row.calls),
        hourly.map((row) => row.credits),
        hourly.map((row) => row.failoverCalls),
      ],
    )
  }
  if (instance !== undefined && daily.length > 0) await addShares(client, instance, daily)
}

/** An instance's shares of the days' credits (rows merged and in key order, as addRows's). */
async function addShares(client: PoolClient, instance: string, daily: DailyUsage[]): Promise<void> {
  await client.query(
    `INSERT INTO usage_instance_daily (day, subject, instance, credits)
     SELECT day, subject, $1, credits FROM unnest($2::text[], $3::text[], $4::bigint[]) AS rows (day, subject, credits)
     ON CONFLICT (day, subject, instance) DO UPDATE SET credits = usage_instance_daily.credits + excluded.credits`,
    [instance, daily.map((row) => row.day), daily.map((row) => row.subject), daily.map((row) => row.credits)],
  )
}

/** One row per (day, subject), in key order: one upsert statement may not touch a row twice. */
function mergeDaily(rows: DailyUsage[]): DailyUsage[] {
  const merged = new Map<string, DailyUsage>()
  for (const row of rows) {
    const id = `${row.day}\n${row.subject}`
    const seen = merged.get(id)
    if (seen) seen.credits += row.credits
    else merged.set(id, { ...row })
  }
  return [...merged.values()].sort((a, b) => compare(a.day, b.day) || compare(a.subject, b.subject))
}

function mergeHourly(rows: HourlyUsage[]): HourlyUsage[] {
  const merged = new Map<string, HourlyUsage>()
  for (const row of rows) {
    const id = `${row.keyId}\n${row.network}\n${row.method}\n${row.hour}`
    const seen = merged.get(id)
    if (seen) {
      seen.calls += row.calls
      seen.credits += row.credits
      seen.failoverCalls += row.failoverCalls
    } else merged.set(id, { ...row })
  }
  return [...merged.values()].sort(
    (a, b) =>
      a.keyId - b.keyId ||
      compare(a.network, b.network) ||
      compare(a.method, b.method) ||
      compare(a.hour, b.hour),
  )
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
