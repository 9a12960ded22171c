import process from 'node:process'
import type { Command } from 'commander'
import { configOption, loadConfigOrExit } from './configOption.ts'
import { print } from './openAdmin.ts'

export function addMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      "bring the database's schema up to date (start does it too; run it first to upgrade before the gateways)",
    )
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action(async (options: { json?: boolean; config?: string }) => {
      const config = await loadConfigOrExit(options.config)
      // loaded on use: `--help` needs none of it
      const { migrateStorage } = await import('../store/migrateStorage.ts')
      let report: Awaited<ReturnType<typeof migrateStorage>>
      try {
        report = await migrateStorage(config.storage)
      } catch (err) {
        process.stderr.write(`${(err as Error).message}\n`)
        process.exitCode = 1
        return
      }
      if (options.json) return print(JSON.stringify(report))
      for (const { version, name } of report.applied) print(`applied migration ${version}: ${name}`)
      print(
        `${report.database} is at schema version ${report.version}${report.applied.length === 0 ? ' (nothing to apply)' : ''}`,
      )
    })
}
