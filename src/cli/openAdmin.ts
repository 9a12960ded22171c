import { createSqliteKeyStore } from '../auth/createSqliteKeyStore.ts'
import { createKeyAdmin, type KeyAdmin, KeyAdminError } from '../auth/keyAdmin.ts'
import { AllowlistEntryError } from '../auth/parseAllowlistEntry.ts'
import type { Config } from '../config/configSchema.ts'
import { createSqliteUsageStore } from '../metering/createSqliteUsageStore.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { loadConfigOrExit } from './configOption.ts'

export type AdminSession = { config: Config; admin: KeyAdmin; usage: UsageStore; networks: string[] }

/**
 * Runs one CLI operation against the configured database. A refused operation prints its reason
 * and exits 1; a config error exits 2.
 */
export async function withAdmin(
  configFile: string | undefined,
  run: (session: AdminSession) => Promise<void>,
) {
  const config = loadConfigOrExit(configFile)
  const db = openSqlite(config.storage.sqlite)
  try {
    const networks = config.networks.map((network) => network.name)
    if (config.devnet) networks.push('devnet')
    await run({
      config,
      admin: createKeyAdmin(createSqliteKeyStore(db), config.plans),
      usage: createSqliteUsageStore(db),
      networks,
    })
  } catch (err) {
    if (!(err instanceof KeyAdminError || err instanceof AllowlistEntryError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exitCode = 1
  } finally {
    db.close()
  }
}

export function print(text: string): void {
  process.stdout.write(`${text}\n`)
}

/** Left-aligned columns, for the human-readable listings. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
