import type { Account } from '../auth/apiKey.ts'
import type { PlanName } from '../config/configSchema.ts'
import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import type { AccountRecord, AccountStore } from './accountStore.ts'

type AccountRow = {
  id: number
  name: string
  plan: string
  daily_credits: number | null
  credits_per_second: number | null
  created_at: number
  token_created_at: number | null
  tokens_changed_at: number | null
}

const selectAccounts = `
  SELECT a.id, a.name, a.plan, a.daily_credits, a.credits_per_second, a.created_at,
         t.created_at AS token_created_at,
         (SELECT max(max(created_at, coalesce(revoked_at, 0))) FROM account_tokens WHERE account_id = a.id) AS tokens_changed_at
  FROM accounts a LEFT JOIN account_tokens t ON t.account_id = a.id AND t.revoked_at IS NULL`

/** Account tokens on SQLite (migration 'account tokens'). */
export function createSqliteAccountStore(db: SqliteDatabase): AccountStore {
  const selectAll = db.prepare<[], AccountRow>(`${selectAccounts} ORDER BY a.id`)
  const selectOne = db.prepare<[string], AccountRow>(`${selectAccounts} WHERE a.name = ?`)
  const selectByHash = db.prepare<[string], AccountRow>(
    `${selectAccounts} WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
  )
  const selectId = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE name = ?')
  const revokeInUse = db.prepare<[number, number]>(
    'UPDATE account_tokens SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL',
  )
  const insertToken = db.prepare<[number, string, number]>(
    'INSERT INTO account_tokens (account_id, token_hash, created_at) VALUES (?, ?, ?)',
  )
  const replace = db.transaction((accountName: string, tokenHash: string, nowMs: number): boolean => {
    const account = selectId.get(accountName)
    if (!account) return false
    revokeInUse.run(nowMs, account.id)
    insertToken.run(account.id, tokenHash, nowMs)
    return true
  })

  return {
    async listAccounts() {
      return selectAll.all().map(toAccountRecord)
    },
    async getAccountRecord(name) {
      const row = selectOne.get(name)
      return row ? toAccountRecord(row) : undefined
    },
    async replaceToken(accountName, tokenHash, atMs) {
      // BEGIN IMMEDIATE: a CLI beside the gateway replacing at once waits (busy_timeout) rather than
      // failing to turn its read into a write
      return replace.immediate(accountName, tokenHash, atMs)
    },
    async revokeToken(accountName, atMs) {
      const account = selectId.get(accountName)
      return account !== undefined && revokeInUse.run(atMs, account.id).changes > 0
    },
    async getAccountByTokenHash(tokenHash) {
      const row = selectByHash.get(tokenHash)
      return row ? toAccount(row) : undefined
    },
  }
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan as PlanName,
    dailyCredits: row.daily_credits,
    creditsPerSecond: row.credits_per_second,
    createdAt: new Date(row.created_at),
  }
}

function toAccountRecord(row: AccountRow): AccountRecord {
  const tokenCreatedAt = row.token_created_at === null ? null : new Date(row.token_created_at)
  const tokensChangedAt = row.tokens_changed_at === null ? null : new Date(row.tokens_changed_at)
  return { ...toAccount(row), tokenCreatedAt, tokensChangedAt }
}
