import type { ApiKey, CreateKeyInput } from './apiKey.ts'

/** Where keys live. SQLite now; Postgres implements the same interface. */
export type KeyStore = {
  createKey(input: CreateKeyInput): Promise<ApiKey>
  listKeys(): Promise<ApiKey[]>
  /** Marks the key revoked; false when there is no such active key. */
  revokeKey(key: string): Promise<boolean>
  /** Changes whenever any key changes, so a cache can tell cheaply that it must reload. */
  getKeysVersion(): Promise<string>
  getMeta(name: string): Promise<string | undefined>
  setMeta(name: string, value: string): Promise<void>
}
