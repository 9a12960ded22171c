import type { Command } from 'commander'
import { planNames } from '../config/planNames.ts'
import { configOption } from './configOption.ts'
import { print, table, withAdmin } from './openAdmin.ts'

export function addPlansCommand(program: Command): void {
  program
    .command('plans')
    .description('the plans and their numbers, as the config sets them (defaults: docs/compatibility.md §3)')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((options: { json?: boolean; config?: string }) =>
      withAdmin(options.config, async ({ config }) => {
        if (options.json) return print(JSON.stringify(config.plans))
        const show = (value: number | null, none: string) =>
          value === null ? none : value.toLocaleString('en-US')
        print(
          table([
            ['PLAN', 'CREDITS/DAY', 'CREDITS/SECOND', 'KEYS/ACCOUNT', 'FAILOVER', 'CALLS IN FLIGHT/KEY'],
            ...planNames.map((name) => {
              const plan = config.plans[name]
              return [
                name,
                show(plan.dailyCredits, 'per account'),
                show(plan.creditsPerSecond, 'per account'),
                show(plan.keysPerAccount, 'unlimited'),
                plan.failover ? 'yes' : 'no',
                show(plan.maxCallsInFlight, ''),
              ]
            }),
          ]),
        )
      }),
    )
}
