import type { Buffer } from 'node:buffer'
import type { Account } from '../auth/apiKey.ts'
import { AlertSettingsError } from '../errors/accountErrors.ts'
import { NoAccountError } from '../errors/adminErrors.ts'
import type { AlertPayload } from './alertPayload.ts'
import { generateAlertSecret, sealSecret } from './alertSecret.ts'
import { type AlertSettings, type AlertSettingsChange, defaultThresholds } from './alertSettings.ts'
import type { AlertEventRow, AlertStore } from './alertStore.ts'

export type AlertAdminDeps = {
  alerts: AlertStore
  /** The account of a name (AccountStore.getAccountRecord). */
  accounts: { getAccountRecord(name: string): Promise<Account | undefined> }
  /** The database's secret hash key (the signing secrets are sealed under it). */
  hashKey: () => Promise<Buffer>
  now: () => number
}

/** The most delivery log rows one read answers. */
export const maxDeliveryRows = 500

export type AlertAdmin = ReturnType<typeof createAlertAdmin>

/** An account's alert settings as shown: never the secret (it is shown once, when made). */
export type AlertSettingsView =
  | { account: string; enabled: false }
  | {
      account: string
      enabled: true
      webhook: string
      thresholds: number[]
      format: AlertSettings['format']
      updatedAt: string
    }

/**
 * Usage alert settings and their delivery log, for the CLI, the admin API and the account API
 * alike. A signing secret is made when alerts are first turned on (and on rotation), answered once,
 * and kept sealed (alertSecret.ts) so deliveries can be signed with it.
 */
export function createAlertAdmin(deps: AlertAdminDeps) {
  const { alerts, now } = deps

  async function accountId(name: string): Promise<number> {
    const found = await deps.accounts.getAccountRecord(name)
    if (!found) throw new NoAccountError()
    return found.id
  }

  function view(account: string, settings: AlertSettings | undefined): AlertSettingsView {
    if (!settings) return { account, enabled: false }
    const { webhookUrl: webhook, thresholds, format, updatedAt } = settings
    return { account, enabled: true, webhook, thresholds, format, updatedAt: updatedAt.toISOString() }
  }

  return {
    async get(account: string): Promise<AlertSettingsView> {
      return view(account, await alerts.getSettings(await accountId(account)))
    },

    /**
     * Turns alerts on or changes them: a webhook is needed the first time; thresholds default to
     * 50, 75, 90 and 100 %, the format to json. `secret` is set when one was made (first time, or
     * `rotateSecret`): the only time it is shown.
     */
    async set(
      account: string,
      change: AlertSettingsChange,
    ): Promise<{ settings: AlertSettingsView; secret: string | null }> {
      const id = await accountId(account)
      const before = await alerts.getSettings(id)
      const webhookUrl = change.webhook ?? before?.webhookUrl
      if (webhookUrl === undefined)
        throw new AlertSettingsError('a webhook URL is needed to turn alerts on (webhook, --webhook)')
      const secret = before === undefined || change.rotateSecret ? generateAlertSecret() : null
      const nowMs = now()
      await alerts.putSettings({
        accountId: id,
        webhookUrl,
        thresholds: change.thresholds ?? before?.thresholds ?? [...defaultThresholds],
        format: change.format ?? before?.format ?? 'json',
        sealedSecret:
          secret === null ? (before as AlertSettings).sealedSecret : sealSecret(secret, await deps.hashKey()),
        nowMs,
      })
      return { settings: view(account, await alerts.getSettings(id)), secret }
    },

    /** Turns the account's alerts off (deliveries not made yet are given up); false when they were off. */
    async turnOff(account: string): Promise<boolean> {
      return alerts.deleteSettings(await accountId(account), now())
    },

    /** The account's events and their deliveries, newest first. */
    async deliveries(account: string, limit = 100) {
      const rows = await alerts.listEvents(await accountId(account), Math.min(limit, maxDeliveryRows))
      return rows.map(toDeliveryView)
    },
  }
}

/** A delivery log row as the APIs answer it. */
function toDeliveryView(row: AlertEventRow) {
  const payload = JSON.parse(row.payload) as AlertPayload
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
  return {
    id: row.id,
    event: row.kind,
    key: payload.key,
    threshold: payload.threshold,
    day: row.day,
    creditsUsed: payload.creditsUsed,
    creditLimit: payload.creditLimit,
    createdAt: iso(row.createdAtMs),
    status: row.deliveredAtMs !== null ? 'delivered' : row.gaveUpAtMs !== null ? 'failed' : 'pending',
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastAttemptAt: iso(row.lastAttemptAtMs),
    deliveredAt: iso(row.deliveredAtMs),
    nextAttemptAt: iso(row.nextAttemptAtMs),
    gaveUpAt: iso(row.gaveUpAtMs),
  }
}

export type DeliveryView = ReturnType<typeof toDeliveryView>
