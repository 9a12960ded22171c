import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import { requestLogColumns, requestLogWhere } from './requestLogSql.ts'
import type { FailureCount, RequestLogRow, RequestLogStore, StoredRequestLogRow } from './requestLogStore.ts'

/** The request log on SQLite (migration 'request log'). */
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
  const deleteOld = db.prepare<[number]>('DELETE FROM request_log WHERE time_ms < ?')
  const accountsOver = db.prepare<[number], { accountId: number }>(
    'SELECT account_id AS accountId FROM request_log GROUP BY account_id HAVING count(*) > ?',
  )
  const deleteBeyond = db.prepare<[number, number, number]>(
    `DELETE FROM request_log WHERE account_id = ? AND id IN (
       SELECT id FROM request_log WHERE account_id = ? ORDER BY time_ms DESC, id DESC LIMIT -1 OFFSET ?)`,
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
      let deleted = deleteOld.run(olderThanMs).changes
      for (const { accountId } of accountsOver.all(rowsPerAccount))
        deleted += deleteBeyond.run(accountId, accountId, rowsPerAccount).changes
      return deleted
    },
  }
}
