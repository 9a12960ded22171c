import process from 'node:process'
import type { AccountAdmin } from '../accounts/createAccountAdmin.ts'
import type { AlertAdmin } from '../alerts/createAlertAdmin.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { Config } from '../config/configSchema.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import { loadConfigOrExit } from './configOption.ts'

export type AdminSession = {
  config: Config
  admin: KeyAdmin
  accounts: AccountAdmin
  alerts: AlertAdmin
  usage: UsageStore
  networks: string[]
}

/**
 * Runs one CLI operation against the configured database. A refused operation prints its reason
 * and exits 1; a config error exits 2.
 */
export async function withAdmin(
  configFile: string | undefined,
  run: (session: AdminSession) => Promise<void>,
) {
  const config = await loadConfigOrExit(configFile)
  // loaded on use: `--help` and argument errors need none of it
  const [
    { createKeyAdmin },
    { createAccountAdmin },
    { createAlertAdmin },
    { getSecretHashKey },
    { createStores },
  ] = await Promise.all([
    import('../auth/keyAdmin.ts'),
    import('../accounts/createAccountAdmin.ts'),
    import('../alerts/createAlertAdmin.ts'),
    import('../auth/hashSecret.ts'),
    import('../app/createStores.ts'),
  ])
  // not exclusive: the CLI edits keys beside a running gateway
  let stores: Awaited<ReturnType<typeof createStores>>
  try {
    stores = await createStores(config.storage, { exclusive: false })
  } catch (err) {
    // the database is down, missing or refuses us: one line, no stack
    process.stderr.write(`${(err as Error).message}\n`)
    process.exitCode = 1
    return
  }
  try {
    const networks = config.networks.map((network) => network.name)
    if (config.devnet) networks.push('devnet')
    await run({
      config,
      admin: createKeyAdmin(stores.keys, config.plans),
      accounts: createAccountAdmin({
        keys: stores.keys,
        accounts: stores.accounts,
        usage: stores.usage,
        plans: () => config.plans,
        now: Date.now,
      }),
      alerts: createAlertAdmin({
        alerts: stores.alerts,
        accounts: stores.accounts,
        hashKey: () => getSecretHashKey(stores.keys),
        now: Date.now,
      }),
      usage: stores.usage,
      networks,
    })
  } catch (err) {
    // a refused operation (KeyAdminError, NoActiveKeyError, AllowlistEntryError, ...): its message says why
    if (!(err instanceof TollgateError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exitCode = 1
  } finally {
    await stores.close()
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
