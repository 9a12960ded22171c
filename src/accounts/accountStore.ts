import type { Account } from '../auth/apiKey.ts'

/**
 * An account with whether a sign-in token is in use for it, and since when; and when one of its
 * tokens was last made or revoked (portal sessions signed in before then have ended).
 */
export type AccountRecord = Account & { tokenCreatedAt: Date | null; tokensChangedAt: Date | null }

/**
 * Accounts as their holders sign in to them: each account's one sign-in token, kept as its hash
 * (hmac-sha256 under the database's hash key, as key secrets are). The accounts themselves are made
 * with their first key (KeyStore); this store reads them and keeps their tokens.
 */
export type AccountStore = {
  /** Every account, oldest first. */
  listAccounts(): Promise<AccountRecord[]>
  getAccountRecord(name: string): Promise<AccountRecord | undefined>
  /**
   * Puts `tokenHash` in use for the account, in place of the one in use before (which stops working
   * in the same transaction) at `atMs` (the gateway's clock, which sessions are compared with);
   * false when there is no such account.
   */
  replaceToken(accountName: string, tokenHash: string, atMs: number): Promise<boolean>
  /** Stops the account's token in use at `atMs`; false when it had none. */
  revokeToken(accountName: string, atMs: number): Promise<boolean>
  /** The account whose token in use has this hash. */
  getAccountByTokenHash(tokenHash: string): Promise<Account | undefined>
}
