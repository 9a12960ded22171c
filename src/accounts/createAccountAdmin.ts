import type { Buffer } from 'node:buffer'
import type { Account, ApiKey } from '../auth/apiKey.ts'
import { getSecretHashKey, hashSecret } from '../auth/hashSecret.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { PlansConfig } from '../config/configSchema.ts'
import { NoAccountError } from '../errors/adminErrors.ts'
import { nextUtcMidnight, utcDay } from '../metering/clock.ts'
import { accountSubject, type UsageStore } from '../metering/usageStore.ts'
import type { AccountRecord, AccountStore } from './accountStore.ts'
import { generateAccountToken, isAccountTokenShape } from './accountToken.ts'

export type AccountAdminDeps = {
  keys: KeyStore
  accounts: AccountStore
  usage: UsageStore
  /** The plans as configured now (a reload changes them). */
  plans: () => PlansConfig
  now: () => number
}

/** An account as `accounts show` and the account API see it: its keys, its plan's numbers, today's credits. */
export type AccountDetails = {
  account: AccountRecord
  /** Its keys, revoked ones included, oldest first. */
  keys: ApiKey[]
  /** The plan's numbers, or the account's own on the custom plan; null: no limit. */
  dailyCredits: number | null
  creditsPerSecond: number | null
  /** Credits the account's keys spent today (UTC), as of the last write of usage. */
  creditsUsedToday: number
  /** When today's credits reset (the next UTC midnight). */
  resetsAt: Date
}

export type AccountAdmin = ReturnType<typeof createAccountAdmin>

/**
 * Every account operation, for the CLI, the admin API and the account API alike: accounts are read
 * with their keys and credits, and each gets one sign-in token at a time (shown once, stored as its
 * hash under the database's hash key, as key secrets are).
 */
export function createAccountAdmin(deps: AccountAdminDeps) {
  const { keys, accounts, usage, now } = deps
  let hashKey: Promise<Buffer> | undefined
  function getHashKey(): Promise<Buffer> {
    hashKey ??= getSecretHashKey(keys).catch((err: unknown) => {
      hashKey = undefined
      throw err
    })
    return hashKey
  }

  async function record(name: string): Promise<AccountRecord> {
    const found = await accounts.getAccountRecord(name)
    if (!found) throw new NoAccountError()
    return found
  }

  async function details(account: AccountRecord): Promise<AccountDetails> {
    const nowMs = now()
    const plan = deps.plans()[account.plan]
    const [accountKeys, daily] = await Promise.all([
      keys.listAccountKeys(account.id),
      usage.loadSubjectsUsage(utcDay(nowMs), [accountSubject(account.id)]),
    ])
    return {
      account,
      keys: accountKeys,
      dailyCredits: plan?.dailyCredits ?? account.dailyCredits,
      creditsPerSecond: plan?.creditsPerSecond ?? account.creditsPerSecond,
      creditsUsedToday: daily.get(accountSubject(account.id)) ?? 0,
      resetsAt: new Date(nextUtcMidnight(nowMs)),
    }
  }

  return {
    list: () => accounts.listAccounts(),

    async show(name: string): Promise<AccountDetails> {
      return details(await record(name))
    },

    /** The account's keys, revoked ones included, oldest first. */
    keysOf: (account: Account) => keys.listAccountKeys(account.id),

    /** A new token for the account, in place of the one before (which stops working now). */
    async makeToken(name: string): Promise<string> {
      const token = generateAccountToken()
      if (!(await accounts.replaceToken(name, hashSecret(token, await getHashKey()), now()))) {
        throw new NoAccountError()
      }
      return token
    },

    /** Stops the account's token; false when none was in use. */
    async revokeToken(name: string): Promise<boolean> {
      await record(name)
      return accounts.revokeToken(name, now())
    },

    /** The account `token` signs in to; undefined for a token of the wrong shape, unknown or revoked. */
    async accountOfToken(token: string): Promise<Account | undefined> {
      if (!isAccountTokenShape(token)) return undefined
      return accounts.getAccountByTokenHash(hashSecret(token, await getHashKey()))
    },

    /**
     * The account a portal session names, while it is the account of that id (an account made again
     * under the same name is another account) and no token of it was made or revoked since the
     * session began: a new or revoked token ends every session.
     */
    async accountOfSession(session: {
      accountId: number
      accountName: string
      issuedAtMs: number
    }): Promise<Account | undefined> {
      const found = await accounts.getAccountRecord(session.accountName)
      if (found?.id !== session.accountId) return undefined
      if (found.tokensChangedAt !== null && found.tokensChangedAt.getTime() > session.issuedAtMs)
        return undefined
      const { tokenCreatedAt: _, tokensChangedAt: __, ...account } = found
      return account
    },
  }
}
