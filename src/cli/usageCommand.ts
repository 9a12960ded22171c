import type { Command } from 'commander'
import { utcDay } from '../metering/clock.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import { usageDays } from '../metering/usageBounds.ts'
import { configOption } from './configOption.ts'
import { print, table, withAdmin } from './openAdmin.ts'

export function addUsageCommand(program: Command): void {
  program
    .command('usage')
    .description(
      'calls, credits and partner-served calls per day, key and method (as of the last flush, at most a second old)',
    )
    .option('--key <key>', 'only this key')
    .option('--days <n>', 'days back, today included', '7')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((options: { key?: string; days: string; json?: boolean; config?: string }) =>
      withAdmin(options.config, async ({ admin, usage }) => {
        const days = parseWholeNumber('--days', options.days, usageDays)
        const fromDay = utcDay(Date.now() - (days - 1) * 86_400_000)
        const keys = await admin.list()
        const byId = new Map(keys.map((key) => [key.id, key.key]))
        const keyId = options.key === undefined ? undefined : (await admin.show(options.key)).id
        const rows = await usage.queryUsage({ fromDay, ...(keyId === undefined ? {} : { keyId }) })
        const view = rows.map((row) => ({ ...row, key: byId.get(row.keyId) ?? String(row.keyId) }))
        if (options.json) return print(JSON.stringify(view.map(({ keyId: _, ...row }) => row)))
        if (view.length === 0) return print('no usage')
        print(
          table([
            ['DAY', 'KEY', 'NETWORK', 'METHOD', 'CALLS', 'CREDITS', 'FAILOVER'],
            ...view.map((row) => [
              row.day,
              row.key,
              row.network,
              row.method,
              String(row.calls),
              String(row.credits),
              String(row.failoverCalls),
            ]),
          ]),
        )
      }),
    )
}
