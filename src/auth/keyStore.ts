import type { PlanName } from '../config/configSchema.ts'
import type { Account, ApiKey } from './apiKey.ts'
import type { KeySettings } from './keySettings.ts'

export type NewAccount = {
  name: string
  plan: PlanName
  dailyCredits: number | null
  creditsPerSecond: number | null
}

export type CreateKeyInput = {
  /** An existing account's name, or a new account to create with the key. */
  account: { existing: string } | { create: NewAccount }
  name: string
  settings: KeySettings
  /** null: no limit. Checked in the same transaction as the insert. */
  maxKeysPerAccount: (account: Account) => number | null
  key?: string
}

/** Where accounts and keys live. SQLite now; Postgres implements the same interface. */
export type KeyStore = {
  /** Creates the key (and its account when asked); throws KeyStoreError for a missing account or a full one. */
  createKey(input: CreateKeyInput): Promise<ApiKey>
  getAccount(name: string): Promise<Account | undefined>
  /** Every key with its account, revoked ones included. */
  listKeys(): Promise<ApiKey[]>
  /** One account's keys, revoked ones included, oldest first (the account API reads only these). */
  listAccountKeys(accountId: number): Promise<ApiKey[]>
  /** The key, revoked or not. */
  getKey(key: string): Promise<ApiKey | undefined>
  /** Replaces a key's settings; false when there is no such active key. */
  updateKeySettings(key: string, settings: KeySettings): Promise<boolean>
  /** Marks the key revoked; false when there is no such active key. */
  revokeKey(key: string): Promise<boolean>
  /** Changes whenever any key or account changes, so a cache can tell cheaply that it must reload. */
  getKeysVersion(): Promise<string>
  getMeta(name: string): Promise<string | undefined>
  setMeta(name: string, value: string): Promise<void>
  /** Stores `value` under `name` unless a value is there already; answers the stored one, so racing processes agree. */
  ensureMeta(name: string, value: string): Promise<string>
  /** Sets the key's secret hash to `to` if it still is `from` (a rotation in between wins); false otherwise. */
  replaceSecretHash(key: string, from: string, to: string): Promise<boolean>
}

export class KeyStoreError extends Error {
  override name = 'KeyStoreError'
}
