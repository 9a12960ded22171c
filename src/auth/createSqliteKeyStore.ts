import type { PlanName } from '../config/configSchema.ts'
import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import { type Account, type ApiKey, generateApiKey } from './apiKey.ts'
import { parseKeySettings } from './keySettings.ts'
import type { KeyStore } from './keyStore.ts'
import { KeyStoreError } from './keyStore.ts'

type KeyRow = {
  id: number
  key: string
  name: string
  settings: string
  created_at: number
  revoked_at: number | null
  account_id: number
  account_name: string
  plan: string
  daily_credits: number | null
  credits_per_second: number | null
  account_created_at: number
}

const selectKeys = `
  SELECT k.id, k.key, k.name, k.settings, k.created_at, k.revoked_at, a.id AS account_id,
         a.name AS account_name, a.plan, a.daily_credits, a.credits_per_second, a.created_at AS account_created_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

export function createSqliteKeyStore(db: SqliteDatabase): KeyStore {
  const insertAccount = db.prepare<[string, string, number | null, number | null, number]>(
    'INSERT INTO accounts (name, plan, daily_credits, credits_per_second, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const selectAccountId = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE name = ?')
  const selectAccount = db.prepare<[string], AccountColumns>(
    `SELECT id AS account_id, name AS account_name, plan, daily_credits, credits_per_second,
            created_at AS account_created_at FROM accounts WHERE name = ?`,
  )
  const countActive = db.prepare<[number], { count: number }>(
    'SELECT count(*) AS count FROM api_keys WHERE account_id = ? AND revoked_at IS NULL',
  )
  const insertKey = db.prepare<[string, string, string, number, number]>(
    'INSERT INTO api_keys (key, name, settings, account_id, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const selectAll = db.prepare<[], KeyRow>(`${selectKeys} ORDER BY k.id`)
  const selectOfAccount = db.prepare<[number], KeyRow>(`${selectKeys} WHERE k.account_id = ? ORDER BY k.id`)
  const selectOne = db.prepare<[string], KeyRow>(`${selectKeys} WHERE k.key = ?`)
  const updateSettings = db.prepare<[string, string]>(
    'UPDATE api_keys SET settings = ? WHERE key = ? AND revoked_at IS NULL',
  )
  const revoke = db.prepare<[number, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE key = ? AND revoked_at IS NULL',
  )
  const selectMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?')
  const upsertMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  )
  const insertMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
  )
  const replaceSecretHash = db.prepare<[string, string, string]>(
    `UPDATE api_keys SET settings = json_set(settings, '$.secretHash', ?)
     WHERE key = ? AND revoked_at IS NULL AND json_extract(settings, '$.secretHash') = ?`,
  )

  const create = db.transaction((input: Parameters<KeyStore['createKey']>[0]): string => {
    let accountId: number
    if ('create' in input.account) {
      const { name, plan, dailyCredits, creditsPerSecond } = input.account.create
      if (selectAccountId.get(name)) throw new KeyStoreError(`account '${name}' already exists`)
      accountId = Number(
        insertAccount.run(name, plan, dailyCredits, creditsPerSecond, Date.now()).lastInsertRowid,
      )
    } else {
      const found = selectAccountId.get(input.account.existing)
      if (!found) throw new KeyStoreError(`no account named '${input.account.existing}'`)
      accountId = found.id
    }
    const key = input.key ?? generateApiKey()
    insertKey.run(key, input.name, JSON.stringify(input.settings), accountId, Date.now())
    const created = toApiKey(selectOne.get(key) as KeyRow)
    const limit = input.maxKeysPerAccount(created.account)
    const count = (countActive.get(accountId) as { count: number }).count
    if (limit !== null && count > limit) {
      throw new KeyStoreError(
        `account '${created.account.name}' already has ${count - 1} key(s), the most its plan (${created.account.plan}) allows`,
      )
    }
    return key
  })

  return {
    async createKey(input) {
      // the write lock taken first, where the busy timeout waits for it: a transaction that read
      // first is refused at once ("database is locked") when another process writes meanwhile
      const key = create.immediate(input)
      return toApiKey(selectOne.get(key) as KeyRow)
    },
    async getAccount(name) {
      const row = selectAccount.get(name)
      return row ? toAccount(row) : undefined
    },
    async listKeys() {
      return selectAll.all().map(toApiKey)
    },
    async listAccountKeys(accountId) {
      return selectOfAccount.all(accountId).map(toApiKey)
    },
    async getKey(key) {
      const row = selectOne.get(key)
      return row ? toApiKey(row) : undefined
    },
    async updateKeySettings(key, settings) {
      return updateSettings.run(JSON.stringify(settings), key).changes > 0
    },
    async revokeKey(key) {
      return revoke.run(Date.now(), key).changes > 0
    },
    async getKeysVersion() {
      return selectMeta.get('keys_version')?.value ?? '0'
    },
    async getMeta(name) {
      return selectMeta.get(name)?.value
    },
    async setMeta(name, value) {
      upsertMeta.run(name, value)
    },
    async ensureMeta(name, value) {
      insertMeta.run(name, value)
      return (selectMeta.get(name) as { value: string }).value
    },
    async replaceSecretHash(key, from, to) {
      return replaceSecretHash.run(to, key, from).changes > 0
    },
  }
}

type AccountColumns = Pick<
  KeyRow,
  'account_id' | 'account_name' | 'plan' | 'daily_credits' | 'credits_per_second' | 'account_created_at'
>

function toAccount(row: AccountColumns): Account {
  return {
    id: row.account_id,
    name: row.account_name,
    plan: row.plan as PlanName,
    dailyCredits: row.daily_credits,
    creditsPerSecond: row.credits_per_second,
    createdAt: new Date(row.account_created_at),
  }
}

function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    account: toAccount(row),
    settings: parseKeySettings(row.settings),
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  }
}
