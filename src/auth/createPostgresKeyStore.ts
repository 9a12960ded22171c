import type { PlanName } from '../config/configSchema.ts'
import type { PostgresPool } from '../store/createPostgresPool.ts'
import { withTransaction } from '../store/withTransaction.ts'
import { type Account, type ApiKey, generateApiKey } from './apiKey.ts'
import { parseKeySettings } from './keySettings.ts'
import type { KeyStore } from './keyStore.ts'
import { KeyStoreError } from './keyStore.ts'

type AccountRow = {
  account_id: number
  account_name: string
  plan: string
  /** bigint columns arrive as text */
  daily_credits: string | null
  credits_per_second: string | null
  account_created_at: Date
}

type KeyRow = AccountRow & {
  id: number
  key: string
  name: string
  settings: string
  created_at: Date
  revoked_at: Date | null
}

const accountColumns = `a.id AS account_id, a.name AS account_name, a.plan, a.daily_credits,
  a.credits_per_second, a.created_at AS account_created_at`

const selectKeys = `
  SELECT k.id, k.key, k.name, k.settings::text AS settings, k.created_at, k.revoked_at, ${accountColumns}
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

/** Accounts and keys in PostgreSQL; every change bumps keys_version by trigger (migration 1). */
export function createPostgresKeyStore(pool: PostgresPool): KeyStore {
  const selectMeta = async (name: string) =>
    (await pool.query<{ value: string }>('SELECT value FROM meta WHERE name = $1', [name])).rows[0]?.value

  return {
    async createKey(input) {
      const key = input.key ?? generateApiKey()
      return withTransaction(pool, async (client) => {
        let account: Account
        if ('create' in input.account) {
          const { name, plan, dailyCredits, creditsPerSecond } = input.account.create
          // ON CONFLICT waits for a racing insert of the same name, then finds it there
          const inserted = await client.query<AccountRow>(
            `INSERT INTO accounts AS a (name, plan, daily_credits, credits_per_second) VALUES ($1, $2, $3, $4)
             ON CONFLICT (name) DO NOTHING RETURNING ${accountColumns}`,
            [name, plan, dailyCredits, creditsPerSecond],
          )
          const row = inserted.rows[0]
          if (!row) throw new KeyStoreError(`account '${name}' already exists`)
          account = toAccount(row)
        } else {
          // the account's row lock makes concurrent creations on one account count one after another
          const found = await client.query<AccountRow>(
            `SELECT ${accountColumns} FROM accounts a WHERE a.name = $1 FOR UPDATE`,
            [input.account.existing],
          )
          const row = found.rows[0]
          if (!row) throw new KeyStoreError(`no account named '${input.account.existing}'`)
          account = toAccount(row)
        }
        const limit = input.maxKeysPerAccount(account)
        if (limit !== null) {
          const counted = await client.query<{ count: string }>(
            'SELECT count(*) AS count FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL',
            [account.id],
          )
          const count = Number(counted.rows[0]?.count)
          if (count >= limit) {
            throw new KeyStoreError(
              `account '${account.name}' already has ${count} key(s), the most its plan (${account.plan}) allows`,
            )
          }
        }
        await client.query(
          'INSERT INTO api_keys (key, name, settings, account_id) VALUES ($1, $2, $3::jsonb, $4)',
          [key, input.name, JSON.stringify(input.settings), account.id],
        )
        const { rows } = await client.query<KeyRow>(`${selectKeys} WHERE k.key = $1`, [key])
        return toApiKey(rows[0] as KeyRow)
      })
    },
    async getAccount(name) {
      const { rows } = await pool.query<AccountRow>(
        `SELECT ${accountColumns} FROM accounts a WHERE a.name = $1`,
        [name],
      )
      return rows[0] ? toAccount(rows[0]) : undefined
    },
    async listKeys() {
      const { rows } = await pool.query<KeyRow>(`${selectKeys} ORDER BY k.id`)
      return rows.map(toApiKey)
    },
    async listAccountKeys(accountId) {
      const { rows } = await pool.query<KeyRow>(`${selectKeys} WHERE k.account_id = $1 ORDER BY k.id`, [
        accountId,
      ])
      return rows.map(toApiKey)
    },
    async getKey(key) {
      const { rows } = await pool.query<KeyRow>(`${selectKeys} WHERE k.key = $1`, [key])
      return rows[0] ? toApiKey(rows[0]) : undefined
    },
    async updateKeySettings(key, settings) {
      const { rowCount } = await pool.query(
        'UPDATE api_keys SET settings = $1::jsonb WHERE key = $2 AND revoked_at IS NULL',
        [JSON.stringify(settings), key],
      )
      return (rowCount ?? 0) > 0
    },
    async revokeKey(key) {
      const { rowCount } = await pool.query(
        'UPDATE api_keys SET revoked_at = now() WHERE key = $1 AND revoked_at IS NULL',
        [key],
      )
      return (rowCount ?? 0) > 0
    },
    async getKeysVersion() {
      return (await selectMeta('keys_version')) ?? '0'
    },
    getMeta: selectMeta,
    async setMeta(name, value) {
      await pool.query(
        'INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
        [name, value],
      )
    },
    async ensureMeta(name, value) {
      // the insert waits for a racing one, then the select sees whichever committed first
      await pool.query('INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
        name,
        value,
      ])
      return (await selectMeta(name)) as string
    },
    async replaceSecretHash(key, from, to) {
      const { rowCount } = await pool.query(
        `UPDATE api_keys SET settings = jsonb_set(settings, '{secretHash}', to_jsonb($1::text))
         WHERE key = $2 AND revoked_at IS NULL AND settings ->> 'secretHash' = $3`,
        [to, key, from],
      )
      return (rowCount ?? 0) > 0
    },
  }
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.account_id,
    name: row.account_name,
    plan: row.plan as PlanName,
    dailyCredits: row.daily_credits === null ? null : Number(row.daily_credits),
    creditsPerSecond: row.credits_per_second === null ? null : Number(row.credits_per_second),
    createdAt: row.account_created_at,
  }
}

function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    account: toAccount(row),
    settings: parseKeySettings(row.settings),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  }
}
