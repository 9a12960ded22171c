import type { AlertFormat, AlertSettings } from './alertSettings.ts'
import type { AlertEventKind, AlertEventRow, ClaimedEvent } from './alertStore.ts'

/** An alert_settings row as either driver answers it (Postgres: bigint as text). */
export type SettingsRow = {
  account_id: number
  webhook_url: string
  thresholds: string
  format: string
  sealed_secret: string
  updated_at: number | string
}

/** An alert_events row as either driver answers it (Postgres: bigint as text). */
export type EventRow = {
  id: string
  account_id: number
  key_id: number
  kind: string
  threshold: number
  day: string
  payload: string
  created_at: number | string
  attempts: number
  last_status: string | null
  last_attempt_at: number | string | null
  next_attempt_at: number | string | null
  claimed_until: number | string
  delivered_at: number | string | null
  gave_up_at: number | string | null
}

export const eventColumns = `id, account_id, key_id, kind, threshold, day, payload, created_at, attempts,
  last_status, last_attempt_at, next_attempt_at, claimed_until, delivered_at, gave_up_at`

export function toSettings(row: SettingsRow): AlertSettings {
  return {
    accountId: row.account_id,
    webhookUrl: row.webhook_url,
    thresholds: JSON.parse(row.thresholds) as number[],
    format: row.format as AlertFormat,
    sealedSecret: row.sealed_secret,
    updatedAt: new Date(Number(row.updated_at)),
  }
}

const orNull = (value: number | string | null) => (value === null ? null : Number(value))

export function toEvent(row: EventRow): AlertEventRow {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    kind: row.kind as AlertEventKind,
    threshold: row.threshold,
    day: row.day,
    payload: row.payload,
    createdAtMs: Number(row.created_at),
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastAttemptAtMs: orNull(row.last_attempt_at),
    nextAttemptAtMs: orNull(row.next_attempt_at),
    deliveredAtMs: orNull(row.delivered_at),
    gaveUpAtMs: orNull(row.gave_up_at),
  }
}

export function toClaimed(row: EventRow): ClaimedEvent {
  return { ...toEvent(row), claimedUntilMs: Number(row.claimed_until) }
}
