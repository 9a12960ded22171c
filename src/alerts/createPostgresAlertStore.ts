import type { PostgresPool } from '../store/createPostgresPool.ts'
import { withTransaction } from '../store/withTransaction.ts'
import { type EventRow, eventColumns, type SettingsRow, toClaimed, toEvent, toSettings } from './alertRows.ts'
import type { AlertStore } from './alertStore.ts'

/**
 * Usage alerts on PostgreSQL (migration 'usage alerts'), shared by every gateway: the events'
 * unique constraint decides which instance made an event, and a claim takes due rows with FOR
 * UPDATE SKIP LOCKED, so instances claiming at once take different events.
 */
export function createPostgresAlertStore(pool: PostgresPool): AlertStore {
  return {
    async getSettings(accountId) {
      const { rows } = await pool.query<SettingsRow>('SELECT * FROM alert_settings WHERE account_id = $1', [
        accountId,
      ])
      return rows[0] ? toSettings(rows[0]) : undefined
    },
    async listSettings(accountIds) {
      if (accountIds.length === 0) return []
      const { rows } = await pool.query<SettingsRow>(
        'SELECT * FROM alert_settings WHERE account_id = ANY($1::integer[])',
        [accountIds],
      )
      return rows.map(toSettings)
    },
    async putSettings({ accountId, webhookUrl, thresholds, format, sealedSecret, nowMs }) {
      await pool.query(
        `INSERT INTO alert_settings (account_id, webhook_url, thresholds, format, sealed_secret, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (account_id) DO UPDATE SET webhook_url = excluded.webhook_url,
           thresholds = excluded.thresholds, format = excluded.format,
           sealed_secret = excluded.sealed_secret, updated_at = excluded.updated_at`,
        [accountId, webhookUrl, JSON.stringify(thresholds), format, sealedSecret, nowMs],
      )
    },
    deleteSettings(accountId, nowMs) {
      return withTransaction(pool, async (client) => {
        const deleted = await client.query('DELETE FROM alert_settings WHERE account_id = $1', [accountId])
        if ((deleted.rowCount ?? 0) === 0) return false
        await client.query(
          `UPDATE alert_events SET next_attempt_at = NULL, last_status = 'alerts turned off', gave_up_at = $1
           WHERE account_id = $2 AND next_attempt_at IS NOT NULL`,
          [nowMs, accountId],
        )
        return true
      })
    },
    async addEvent({ id, accountId, keyId, kind, threshold, day, payload, createdAtMs }) {
      const { rowCount } = await pool.query(
        `INSERT INTO alert_events (id, account_id, key_id, kind, threshold, day, payload, created_at, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
         ON CONFLICT (account_id, key_id, kind, threshold, day) DO NOTHING`,
        [id, accountId, keyId, kind, threshold, day, payload, createdAtMs],
      )
      return (rowCount ?? 0) > 0
    },
    async claimDue(nowMs, limit, claimedUntilMs) {
      const { rows } = await pool.query<EventRow>(
        `UPDATE alert_events SET claimed_until = $1
         WHERE id IN (SELECT id FROM alert_events
                      WHERE next_attempt_at <= $2 AND claimed_until <= $2
                      ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING ${eventColumns}`,
        [claimedUntilMs, nowMs, limit],
      )
      return rows.map(toClaimed)
    },
    async recordAttempt(event, result) {
      const gaveUp = !result.delivered && result.nextAttemptAtMs === undefined
      await pool.query(
        `UPDATE alert_events SET attempts = attempts + 1, claimed_until = 0, last_attempt_at = $1,
           last_status = $2, delivered_at = $3, next_attempt_at = $4, gave_up_at = $5
         WHERE id = $6 AND claimed_until = $7`,
        [
          result.atMs,
          result.status,
          result.delivered ? result.atMs : null,
          result.delivered ? null : (result.nextAttemptAtMs ?? null),
          gaveUp ? result.atMs : null,
          event.id,
          event.claimedUntilMs,
        ],
      )
    },
    async releaseClaim(event) {
      await pool.query('UPDATE alert_events SET claimed_until = 0 WHERE id = $1 AND claimed_until = $2', [
        event.id,
        event.claimedUntilMs,
      ])
    },
    async listEvents(accountId, limit) {
      const { rows } = await pool.query<EventRow>(
        `SELECT ${eventColumns} FROM alert_events WHERE account_id = $1 ORDER BY created_at DESC, id LIMIT $2`,
        [accountId, limit],
      )
      return rows.map(toEvent)
    },
    async pruneEvents(beforeMs) {
      const { rowCount } = await pool.query('DELETE FROM alert_events WHERE created_at < $1', [beforeMs])
      return rowCount ?? 0
    },
  }
}
