import { type Command, InvalidArgumentError, Option } from 'commander'
import { alertFormats, parseThresholdList, webhookUrlSchema } from '../alerts/alertSettings.ts'
import type { AlertSettingsView } from '../alerts/createAlertAdmin.ts'
import { configOption } from './configOption.ts'
import { print, table, withAdmin } from './openAdmin.ts'

type AlertsOptions = {
  config?: string
  json?: boolean
  webhook?: string
  at?: number[]
  format?: 'json' | 'slack'
  rotateSecret?: boolean
  off?: boolean
  deliveries?: boolean
}

/**
 * `tollgate accounts alerts ACCOUNT`: shows the account's usage alert settings, sets them
 * (`--webhook`, `--at`, `--format`; the signing secret printed once when made), makes a new secret
 * (`--rotate-secret`), turns them off (`--off`) or prints the delivery log (`--deliveries`).
 */
export function addAlertsCommand(accounts: Command): void {
  accounts
    .command('alerts')
    .description(
      "show or set the account's usage alerts (webhook): the signing secret is printed once, when made",
    )
    .argument('<account>', 'the account, as `tollgate keys show` names it')
    .option('--webhook <url>', 'the http(s) URL events are posted to (turns alerts on)', (value) => {
      if (!webhookUrlSchema.safeParse(value).success)
        throw new InvalidArgumentError('expected an http:// or https:// URL without a user name or password')
      return value
    })
    .option('--at <percents>', 'shares of the daily credits to alert at (default 50,75,90,100)', (value) => {
      const list = parseThresholdList(value)
      if (!list) throw new InvalidArgumentError('expected whole percents from 1 to 100, such as 50,75,90,100')
      return list
    })
    .addOption(
      new Option('--format <format>', 'the body: json, or slack (an incoming webhook)').choices(alertFormats),
    )
    .option('--rotate-secret', 'make a new signing secret (printed once); the one before stops signing')
    .option('--off', 'turn the alerts off (deliveries not made yet are given up)')
    .option('--deliveries', 'print the delivery log, newest first')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((name: string, options: AlertsOptions) =>
      withAdmin(options.config, async ({ alerts }) => {
        if (options.off) {
          const turnedOff = await alerts.turnOff(name)
          if (options.json) return print(JSON.stringify({ account: name, enabled: false, turnedOff }))
          return print(turnedOff ? 'alerts turned off' : 'alerts were off')
        }
        if (options.deliveries) {
          const deliveries = await alerts.deliveries(name)
          if (options.json) return print(JSON.stringify({ account: name, deliveries }))
          if (deliveries.length === 0) return print('no alert events')
          return print(
            table([
              ['TIME', 'EVENT', 'KEY', 'THRESHOLD', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT TRY'],
              ...deliveries.map((row) => [
                row.createdAt ?? '',
                row.event,
                row.key ?? '-',
                row.threshold === null ? '-' : `${row.threshold}%`,
                row.status,
                String(row.attempts),
                row.lastStatus ?? '-',
                row.nextAttemptAt ?? '-',
              ]),
            ]),
          )
        }
        const changing =
          options.webhook !== undefined ||
          options.at !== undefined ||
          options.format !== undefined ||
          options.rotateSecret === true
        if (!changing) {
          const settings = await alerts.get(name)
          return print(options.json ? JSON.stringify(settings) : describe(settings))
        }
        const { settings, secret } = await alerts.set(name, {
          ...(options.webhook === undefined ? {} : { webhook: options.webhook }),
          ...(options.at === undefined ? {} : { thresholds: options.at }),
          ...(options.format === undefined ? {} : { format: options.format }),
          ...(options.rotateSecret ? { rotateSecret: true } : {}),
        })
        if (options.json) return print(JSON.stringify({ ...settings, secret }))
        print(describe(settings))
        if (secret !== null) print(`signing secret: ${secret}   (shown once: store it now)`)
      }),
    )
}

function describe(settings: AlertSettingsView): string {
  if (!settings.enabled) return `alerts: off (turn them on with --webhook URL)`
  return table([
    ['account', settings.account],
    ['alerts', 'on'],
    ['webhook', settings.webhook],
    ['at', settings.thresholds.map((threshold) => `${threshold}%`).join(', ')],
    ['format', settings.format],
    ['changed', settings.updatedAt],
  ])
}
