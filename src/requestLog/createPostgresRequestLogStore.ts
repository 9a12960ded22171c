import type { PostgresPool } from '../store/createPostgresPool.ts'
import { requestLogColumns, requestLogWhere } from './requestLogSql.ts'
import type { FailureCount, RequestLogStore, StoredRequestLogRow } from './requestLogStore.ts'

/** bigint columns arrive as text. */
type PostgresRow = Omit<StoredRequestLogRow, 'id' | 'timeMs' | 'code' | 'credits'> & {
  id: string
  timeMs: string
  code: string | null
  credits: string
}

/**
 * The request log on PostgreSQL (migration 'request log'), written by every gateway on the database:
 * each flush is one INSERT of all its rows; a prune is a few DELETEs that any number of instances
 * may run at once (a row deleted twice is deleted once).
 */
export function createPostgresRequestLogStore(pool: PostgresPool): RequestLogStore {
  return {
    async add(rows) {
      if (rows.length === 0) return
      const column = <K extends keyof (typeof rows)[number]>(name: K) => rows.map((row) => row[name])
      await pool.query(
        `INSERT INTO request_log (time_ms, account_id, key_id, network, method, outcome, status, code, error,
           reason, credits, duration_ms, cache_hit, upstream, client_address, user_agent, params, answer)
         SELECT * FROM unnest($1::bigint[], $2::integer[], $3::integer[], $4::text[], $5::text[], $6::text[],
           $7::integer[], $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::integer[], $13::boolean[],
           $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])`,
        [
          column('timeMs'),
          column('accountId'),
          column('keyId'),
          column('network'),
          column('method'),
          column('outcome'),
          column('status'),
          column('code'),
          column('error'),
          column('reason'),
          column('credits'),
          column('durationMs'),
          column('cacheHit'),
          column('upstream'),
          column('clientAddress'),
          column('userAgent'),
          column('params'),
          column('answer'),
        ],
      )
    },
    async read(query) {
      const { where, values } = requestLogWhere(query, (index) => `$${index}`)
      const { rows } = await pool.query<PostgresRow>(
        `SELECT ${requestLogColumns} FROM request_log ${where}
         ORDER BY time_ms DESC, id DESC LIMIT $${values.length + 1}`,
        [...values, query.limit],
      )
      return rows.map((row) => ({
        ...row,
        id: Number(row.id),
        timeMs: Number(row.timeMs),
        code: row.code === null ? null : Number(row.code),
        credits: Number(row.credits),
      }))
    },
    async summarize(accountId, fromMs, maxGroups) {
      const failures = await pool.query<
        Omit<FailureCount, 'calls' | 'code'> & { code: string | null; calls: string }
      >(
        `SELECT outcome, status, code, error, reason, count(*) AS calls FROM request_log
         WHERE account_id = $1 AND time_ms >= $2 AND outcome <> 'ok'
         GROUP BY outcome, status, code, error, reason ORDER BY calls DESC, status, code LIMIT $3`,
        [accountId, fromMs, maxGroups],
      )
      const latency = await pool.query<{ n: string; p50: number | null; p99: number | null }>(
        `SELECT count(*) AS n,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
         FROM request_log WHERE account_id = $1 AND time_ms >= $2 AND outcome = 'ok'`,
        [accountId, fromMs],
      )
      const summary = latency.rows[0]
      return {
        failures: failures.rows.map((row) => ({
          ...row,
          code: row.code === null ? null : Number(row.code),
          calls: Number(row.calls),
        })),
        latency: {
          sampledCalls: Number(summary?.n ?? 0),
          p50Ms: summary?.p50 ?? null,
          p99Ms: summary?.p99 ?? null,
        },
      }
    },
    async prune(olderThanMs, rowsPerAccount) {
      let deleted =
        (await pool.query('DELETE FROM request_log WHERE time_ms < $1', [olderThanMs])).rowCount ?? 0
      const over = await pool.query<{ account_id: number }>(
        'SELECT account_id FROM request_log GROUP BY account_id HAVING count(*) > $1',
        [rowsPerAccount],
      )
      for (const { account_id: accountId } of over.rows) {
        const result = await pool.query(
          `DELETE FROM request_log WHERE account_id = $1 AND id IN (
             SELECT id FROM request_log WHERE account_id = $1 ORDER BY time_ms DESC, id DESC OFFSET $2)`,
          [accountId, rowsPerAccount],
        )
        deleted += result.rowCount ?? 0
      }
      return deleted
    },
  }
}
