import type { Buffer } from 'node:buffer'
import type { Logger } from 'pino'
import { type AlertSender, createAlertSender } from '../alerts/createAlertSender.ts'
import { type AlertWatcher, createAlertWatcher } from '../alerts/createAlertWatcher.ts'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import { getSecretHashKey } from '../auth/hashSecret.ts'
import type { Config } from '../config/configSchema.ts'
import type { Clock } from '../metering/clock.ts'
import type { Stores } from './stores.ts'

/** Usage alerts: what finds the events (fed by the meter) and what delivers them. */
export type AlertsStage = {
  watcher: AlertWatcher
  /** What the meter noted last is looked at, then deliveries in flight are aborted (tried again later) and the connections closed. */
  close(): Promise<void>
}

export type AlertsStageDeps = { stores: Stores; keys: KeyRegistry; clock: Clock; log: Logger }

/**
 * Usage alerts (docs/accounts.md): the watcher compares what each flush of usage wrote with the
 * accounts' thresholds, and the sender (unless `alerts.enabled` is false here) delivers the events
 * any instance made. Started before the meter, stopped after it, so the last flush is looked at.
 */
export async function startAlertsStage(config: Config, deps: AlertsStageDeps): Promise<AlertsStage> {
  const { stores, keys, clock, log } = deps
  const settings = config.alerts
  const now = () => clock.now()
  let hashKey: Promise<Buffer> | undefined
  const sender: AlertSender | undefined = settings.enabled
    ? createAlertSender(
        {
          retry: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, forMs: settings.retryForMs },
          timeoutMs: settings.timeoutMs,
          concurrency: settings.concurrency,
          pollMs: settings.pollMs,
          privateAddresses: settings.privateAddresses,
          keepMs: settings.keepDays * 86_400_000,
        },
        {
          store: stores.alerts,
          hashKey: () => {
            hashKey ??= getSecretHashKey(stores.keys)
            return hashKey
          },
          now,
          onError: (err) => log.warn({ err }, 'usage alert delivery failed; retrying'),
        },
      )
    : undefined
  const watcher = createAlertWatcher({
    store: stores.alerts,
    usage: stores.usage,
    subjects: () => keys.activeSubjects(),
    accountKeys: (accountId) => stores.keys.listAccountKeys(accountId),
    now,
    onEvent: () => sender?.wake(),
    onError: (err) =>
      log.warn({ err }, 'looking for usage alert events failed; looked at again with the next usage'),
  })
  return {
    watcher,
    async close() {
      await watcher.idle()
      await sender?.close()
    },
  }
}
