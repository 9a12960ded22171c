import type { SqliteDatabase } from '../store/openSqlite.ts'
import { type ApiKey, type CreateKeyInput, generateApiKey } from './apiKey.ts'
import type { KeyStore } from './keyStore.ts'

type KeyRow = {
  id: number
  key: string
  name: string
  plan: string
  settings: string
  created_at: number
  revoked_at: number | null
}

export function createSqliteKeyStore(db: SqliteDatabase): KeyStore {
  const insert = db.prepare<[string, string, string, number], KeyRow>(
    'INSERT INTO api_keys (key, name, plan, created_at) VALUES (?, ?, ?, ?) RETURNING *',
  )
  const selectAll = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY id')
  const revoke = db.prepare<[number, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE key = ? AND revoked_at IS NULL',
  )
  const selectMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?')
  const upsertMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  )

  return {
    async createKey({ name = '', plan = 'core', key = generateApiKey() }: CreateKeyInput) {
      return toApiKey(insert.get(key, name, plan, Date.now()) as KeyRow)
    },
    async listKeys() {
      return selectAll.all().map(toApiKey)
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
  }
}

function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    plan: row.plan,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  }
}
