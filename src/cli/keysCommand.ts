import type { Command } from 'commander'
import type { ApiKey } from '../auth/apiKey.ts'
import { createSqliteKeyStore } from '../auth/createSqliteKeyStore.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { configOption, loadConfigOrExit } from './configOption.ts'

type StoreOptions = { config?: string }

export function addKeysCommand(program: Command): void {
  const keys = program.command('keys').description('create, list and revoke API keys')

  keys
    .command('create')
    .description('create an API key')
    .option('--name <name>', 'a label for the key', '')
    .option('--json', 'print the key as JSON')
    .addOption(configOption())
    .action((options: StoreOptions & { name: string; json?: boolean }) =>
      withStore(options, async (store) => {
        const key = await store.createKey({ name: options.name })
        print(options.json ? JSON.stringify(toJson(key)) : key.key)
      }),
    )

  keys
    .command('list')
    .description('list API keys')
    .option('--json', 'print the keys as JSON')
    .option('--all', 'include revoked keys')
    .addOption(configOption())
    .action((options: StoreOptions & { json?: boolean; all?: boolean }) =>
      withStore(options, async (store) => {
        const list = (await store.listKeys()).filter((key) => options.all || key.revokedAt === null)
        if (options.json) return print(JSON.stringify(list.map(toJson)))
        if (list.length === 0) return print('no keys')
        print(
          ['KEY                               NAME  PLAN  CREATED  STATUS', ...list.map(toLine)].join('\n'),
        )
      }),
    )

  keys
    .command('revoke')
    .description('revoke an API key: it is refused from then on')
    .argument('<key>', 'the key to revoke')
    .addOption(configOption())
    .action((key: string, options: StoreOptions) =>
      withStore(options, async (store) => {
        if (!(await store.revokeKey(key))) {
          process.stderr.write('no active key with that value\n')
          process.exitCode = 1
          return
        }
        print('revoked')
      }),
    )
}

async function withStore(options: StoreOptions, run: (store: KeyStore) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit(options.config)
  const db = openSqlite(config.storage.sqlite)
  try {
    await run(createSqliteKeyStore(db))
  } finally {
    db.close()
  }
}

function toJson(key: ApiKey) {
  return {
    key: key.key,
    name: key.name,
    plan: key.plan,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
  }
}

function toLine(key: ApiKey): string {
  const status = key.revokedAt ? 'revoked' : 'active'
  return `${key.key}  ${key.name || '-'}  ${key.plan}  ${key.createdAt.toISOString().slice(0, 10)}  ${status}`
}

function print(text: string): void {
  process.stdout.write(`${text}\n`)
}
