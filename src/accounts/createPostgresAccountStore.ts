import type { Account } from '../auth/apiKey.ts'
import type { PlanName } from '../config/configSchema.ts'
import type { PostgresPool } from '../store/createPostgresPool.ts'
import { withTransaction } from '../store/withTransaction.ts'
import type { AccountRecord, AccountStore } from './accountStore.ts'

type AccountRow = {
  id: number
  name: string
  plan: string
  /** bigint columns arrive as text */
  daily_credits: string | null
  credits_per_second: string | null
  created_at: Date
  token_created_at: Date | null
  tokens_changed_at: Date | null
}

const selectAccounts = `
  SELECT a.id, a.name, a.plan, a.daily_credits, a.credits_per_second, a.created_at,
         t.created_at AS token_created_at,
         (SELECT max(greatest(created_at, revoked_at)) FROM account_tokens WHERE account_id = a.id) AS tokens_changed_at
  FROM accounts a LEFT JOIN account_tokens t ON t.account_id = a.id AND t.revoked_at IS NULL`

/** Account tokens on PostgreSQL (migration 'account tokens'), shared by every gateway and CLI. */
export function createPostgresAccountStore(pool: PostgresPool): AccountStore {
  return {
    async listAccounts() {
      const { rows } = await pool.query<AccountRow>(`${selectAccounts} ORDER BY a.id`)
      return rows.map(toAccountRecord)
    },
    async getAccountRecord(name) {
      const { rows } = await pool.query<AccountRow>(`${selectAccounts} WHERE a.name = $1`, [name])
      return rows[0] ? toAccountRecord(rows[0]) : undefined
    },
    replaceToken(accountName, tokenHash, atMs) {
      return withTransaction(pool, async (client) => {
        // the account's row lock puts racing replacements one after another: each finds the
        // token the one before put in use, so at most one is ever in use
        const found = await client.query<{ id: number }>(
          'SELECT id FROM accounts WHERE name = $1 FOR UPDATE',
          [accountName],
        )
        const account = found.rows[0]
        if (!account) return false
        const at = new Date(atMs)
        await client.query(
          'UPDATE account_tokens SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL',
          [account.id, at],
        )
        await client.query(
          'INSERT INTO account_tokens (account_id, token_hash, created_at) VALUES ($1, $2, $3)',
          [account.id, tokenHash, at],
        )
        return true
      })
    },
    async revokeToken(accountName, atMs) {
      const { rowCount } = await pool.query(
        `UPDATE account_tokens SET revoked_at = $2
         WHERE account_id = (SELECT id FROM accounts WHERE name = $1) AND revoked_at IS NULL`,
        [accountName, new Date(atMs)],
      )
      return (rowCount ?? 0) > 0
    },
    async getAccountByTokenHash(tokenHash) {
      const { rows } = await pool.query<AccountRow>(
        `${selectAccounts} WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
        [tokenHash],
      )
      return rows[0] ? toAccount(rows[0]) : undefined
    },
  }
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan as PlanName,
    dailyCredits: row.daily_credits === null ? null : Number(row.daily_credits),
    creditsPerSecond: row.credits_per_second === null ? null : Number(row.credits_per_second),
    createdAt: row.created_at,
  }
}

function toAccountRecord(row: AccountRow): AccountRecord {
  return { ...toAccount(row), tokenCreatedAt: row.token_created_at, tokensChangedAt: row.tokens_changed_at }
}
