import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import { requestLogColumns, requestLogWhere } from './requestLogSql.ts'
import type { FailureCount, RequestLogRow, RequestLogStore, StoredRequestLogRow } from './requestLogStore.ts'

/** Rows one DELETE of a prune takes at most: the event loop runs between them. */
const pruneBatchRows = 2_000

/**
 * The request log on SQLite (migration 'request log'). SQLite runs on the gateway's own thread, so a
 * prune works in short steps with the event loop let run between them: deletes in batches, and each
 * account's bound looked at through its index, one account at a time (no scan of the whole table).
 */
export function createSqliteRequestLogStore(db: SqliteDatabase): RequestLogStore {
  const insert = db.prepare(
    `INSERT INTO request_log (time_ms, account_id, key_id, network, method, outcome, status, code, error,
       reason, credits, duration_ms, cache_hit, upstream, client_address, user_agent, params, answer)
     VALUES (@timeMs, @accountId, @keyId, @network, @method, @outcome, @status, @code, @error, @reason,
       @credits, @durationMs, @cacheHit, @upstream, @clientAddress, @userAgent, @params, @answer)`,
  )
  const addAll = db.transaction((rows: readonly RequestLogRow[]) => {
    for (const row of rows) insert.run({ ...row, cacheHit: row.cacheHit ? 1 : 0 })
  })
  const selectFailures = db.prepare<[number, number, number], FailureCount>(
    `SELECT outcome, status, code, error, reason, count(*) AS calls FROM request_log
     WHERE account_id = ? AND time_ms >= ? AND outcome <> 'ok'
     GROUP BY outcome, status, code, error, reason ORDER BY calls DESC, status, code LIMIT ?`,
  )
  const countOk = db.prepare<[number, number], { n: number }>(
    `SELECT count(*) AS n FROM request_log WHERE account_id = ? AND time_ms >= ? AND outcome = 'ok'`,
  )
  const durationAt = db.prepare<[number, number, number], { d: number }>(
    `SELECT duration_ms AS d FROM request_log WHERE account_id = ? AND time_ms >= ? AND outcome = 'ok'
     ORDER BY duration_ms LIMIT 1 OFFSET ?`,
  )
  const deleteOld = db.prepare<[number, number]>(
    'DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE time_ms < ? LIMIT ?)',
  )
  /** An account's newest row beyond its bound (its rowsPerAccount newest are kept). */
  const firstBeyond = db.prepare<[number, number], { timeMs: number; id: number }>(
    `SELECT time_ms AS timeMs, id FROM request_log WHERE account_id = ?
     ORDER BY time_ms DESC, id DESC LIMIT 1 OFFSET ?`,
  )
  const deleteFrom = db.prepare<[number, number, number, number, number]>(
    `DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE account_id = ?
       AND (time_ms < ? OR (time_ms = ? AND id <= ?)) LIMIT ?)`,
  )
  // the accounts that have rows, one index step each (a loose index scan: no scan of every row)
  const selectAccounts = db.prepare<[], { id: number }>(
    `WITH RECURSIVE logged(id) AS (
       SELECT min(account_id) FROM request_log
       UNION ALL
       SELECT (SELECT min(account_id) FROM request_log WHERE account_id > logged.id) FROM logged
       WHERE logged.id IS NOT NULL)
     SELECT id FROM logged WHERE id IS NOT NULL`,
  )

  return {
    async add(rows) {
      if (rows.length > 0) addAll(rows)
    },
    async read(query) {
      const { where, values } = requestLogWhere(query, () => '?')
      const rows = db
        .prepare(
          `SELECT ${requestLogColumns} FROM request_log ${where} ORDER BY time_ms DESC, id DESC LIMIT ?`,
        )
        .all(...values, query.limit) as (Omit<StoredRequestLogRow, 'cacheHit'> & { cacheHit: number })[]
      return rows.map((row) => ({ ...row, cacheHit: row.cacheHit === 1 }))
    },
    async summarize(accountId, fromMs, maxGroups) {
      const failures = selectFailures.all(accountId, fromMs, maxGroups)
      const sampledCalls = countOk.get(accountId, fromMs)?.n ?? 0
      // the nearest rank, as PostgreSQL's percentile_disc
      const at = (share: number) =>
        sampledCalls === 0
          ? null
          : (durationAt.get(accountId, fromMs, Math.max(0, Math.ceil(sampledCalls * share) - 1))?.d ?? null)
      return { failures, latency: { sampledCalls, p50Ms: at(0.5), p99Ms: at(0.99) } }
    },
    async prune(olderThanMs, rowsPerAccount) {
      let deleted = await inBatches(() => deleteOld.run(olderThanMs, pruneBatchRows).changes)
      for (const { id: accountId } of selectAccounts.all()) {
        await nextTurn()
        const edge = firstBeyond.get(accountId, rowsPerAccount)
        if (!edge) continue
        const { timeMs, id } = edge
        deleted += await inBatches(
          () => deleteFrom.run(accountId, timeMs, timeMs, id, pruneBatchRows).changes,
        )
      }
      return deleted
    },
  }
}

/** Runs `deleteBatch` until a batch deletes fewer than a whole batch, letting the event loop run between. */
async function inBatches(deleteBatch: () => number): Promise<number> {
  let deleted = 0
  for (;;) {
    const changes = deleteBatch()
    deleted += changes
    if (changes < pruneBatchRows) return deleted
    await nextTurn()
  }
}

/** Lets the event loop run (calls waiting are answered) before the prune's next step. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
