import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import { type EventRow, eventColumns, type SettingsRow, toClaimed, toEvent, toSettings } from './alertRows.ts'
import type { AlertStore } from './alertStore.ts'

/**
 * Usage alerts on SQLite (migration 'usage alerts'). The gateway's workers share the file: a claim
 * is one UPDATE ... RETURNING, which SQLite runs alone, so no two processes claim the same event.
 */
export function createSqliteAlertStore(db: SqliteDatabase): AlertStore {
  const selectSettings = db.prepare<[number], SettingsRow>(
    'SELECT * FROM alert_settings WHERE account_id = ?',
  )
  // a list is one JSON parameter: one statement, whatever its length
  const selectSettingsOf = db.prepare<[string], SettingsRow>(
    'SELECT * FROM alert_settings WHERE account_id IN (SELECT value FROM json_each(?))',
  )
  const upsertSettings = db.prepare<[number, string, string, string, string, number]>(
    `INSERT INTO alert_settings (account_id, webhook_url, thresholds, format, sealed_secret, updated_at)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET webhook_url = excluded.webhook_url,
       thresholds = excluded.thresholds, format = excluded.format,
       sealed_secret = excluded.sealed_secret, updated_at = excluded.updated_at`,
  )
  const deleteSettings = db.prepare<[number]>('DELETE FROM alert_settings WHERE account_id = ?')
  const giveUpPending = db.prepare<[string, number, number]>(
    `UPDATE alert_events SET next_attempt_at = NULL, last_status = ?, gave_up_at = ?
     WHERE account_id = ? AND next_attempt_at IS NOT NULL`,
  )
  const turnOff = db.transaction((accountId: number, nowMs: number): boolean => {
    const deleted = deleteSettings.run(accountId).changes > 0
    if (deleted) giveUpPending.run('alerts turned off', nowMs, accountId)
    return deleted
  })
  const insertEvent = db.prepare<[string, number, number, string, number, string, string, number, number]>(
    `INSERT INTO alert_events (id, account_id, key_id, kind, threshold, day, payload, created_at, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, key_id, kind, threshold, day) DO NOTHING`,
  )
  const claim = db.prepare<[number, number, number, number], EventRow>(
    `UPDATE alert_events SET claimed_until = ?
     WHERE id IN (SELECT id FROM alert_events
                  WHERE next_attempt_at <= ? AND claimed_until <= ?
                  ORDER BY next_attempt_at LIMIT ?)
     RETURNING ${eventColumns}`,
  )
  const record = db.prepare<[number, string, number | null, number | null, number | null, string, number]>(
    `UPDATE alert_events SET attempts = attempts + 1, claimed_until = 0, last_attempt_at = ?,
       last_status = ?, delivered_at = ?, next_attempt_at = ?, gave_up_at = ?
     WHERE id = ? AND claimed_until = ?`,
  )
  const release = db.prepare<[string, number]>(
    'UPDATE alert_events SET claimed_until = 0 WHERE id = ? AND claimed_until = ?',
  )
  const selectEvents = db.prepare<[number, number], EventRow>(
    `SELECT ${eventColumns} FROM alert_events WHERE account_id = ? ORDER BY created_at DESC, id LIMIT ?`,
  )
  const prune = db.prepare<[number]>('DELETE FROM alert_events WHERE created_at < ?')

  return {
    async getSettings(accountId) {
      const row = selectSettings.get(accountId)
      return row ? toSettings(row) : undefined
    },
    async listSettings(accountIds) {
      if (accountIds.length === 0) return []
      return selectSettingsOf.all(JSON.stringify(accountIds)).map(toSettings)
    },
    async putSettings(settings) {
      const { accountId, webhookUrl, thresholds, format, sealedSecret, nowMs } = settings
      upsertSettings.run(accountId, webhookUrl, JSON.stringify(thresholds), format, sealedSecret, nowMs)
    },
    async deleteSettings(accountId, nowMs) {
      return turnOff.immediate(accountId, nowMs)
    },
    async addEvent(event) {
      const { id, accountId, keyId, kind, threshold, day, payload, createdAtMs } = event
      const added = insertEvent.run(
        id,
        accountId,
        keyId,
        kind,
        threshold,
        day,
        payload,
        createdAtMs,
        createdAtMs,
      )
      return added.changes > 0
    },
    async claimDue(nowMs, limit, claimedUntilMs) {
      return claim.all(claimedUntilMs, nowMs, nowMs, limit).map(toClaimed)
    },
    async recordAttempt(event, result) {
      record.run(
        result.atMs,
        result.status,
        result.delivered ? result.atMs : null,
        result.delivered ? null : (result.nextAttemptAtMs ?? null),
        !result.delivered && result.nextAttemptAtMs === undefined ? result.atMs : null,
        event.id,
        event.claimedUntilMs,
      )
    },
    async releaseClaim(event) {
      release.run(event.id, event.claimedUntilMs)
    },
    async listEvents(accountId, limit) {
      return selectEvents.all(accountId, limit).map(toEvent)
    },
    async pruneEvents(beforeMs) {
      return prune.run(beforeMs).changes
    },
  }
}
