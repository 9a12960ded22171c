import type { Buffer } from 'node:buffer'
import type { AlertAdmin } from '../alerts/createAlertAdmin.ts'
import type { Account } from '../auth/apiKey.ts'
import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import type { RequestLogReader } from '../requestLog/readRequestLog.ts'
import type { AccountAdmin } from './createAccountAdmin.ts'
import type { AccountRequestRate } from './createAccountRequestRate.ts'
import type { AccountSessions } from './createAccountSessions.ts'
import type { OidcClient } from './createOidcClient.ts'

// The account API's shapes, apart from its handlers (handleAccountApi and each resource's file import them).

export type AccountApiRequest = {
  method: string
  url: string
  authorization: string | undefined
  /** The request's body as text (bounded by the server), '' when none. */
  body: string
  /** The request's headers (cookies, CSRF tokens, user agent). */
  headers: Readonly<Record<string, string | string[] | undefined>>
  /** Whom wrong tokens are counted against. */
  clientAddress: string | undefined
  /** The connection is TLS: the session cookie is then `Secure`. */
  secure?: boolean
}

export type AccountApiResponse = {
  status: number
  body: unknown
  /** A list of values is sent as the header once for each (several Set-Cookie). */
  headers?: Record<string, string | readonly string[]>
  /** Set when `body` is text of this type (an NDJSON export), not JSON to serialize. */
  contentType?: string
}

export type AccountApiDeps = {
  accounts: AccountAdmin
  /** Usage alert settings and deliveries. */
  alerts: AlertAdmin
  /** The key operations, the admin API's own (keysResource checks the key is the account's first). */
  keyAdmin: KeyAdmin
  usage: UsageStore
  /** Pending usage is written before usage is read, so answers include the latest calls. */
  flushUsage: () => Promise<void>
  now: () => number
  /** Wrong account tokens, per client address (createAccountTokenFailures). */
  tokenFailures: AuthFailureLimiter
  /** The portal's sign-ins (createAccountSessions). */
  sessions: AccountSessions
  /** Sign-in through an identity provider; undefined when none is configured (accounts.oidc; GET /account/api/session says which). */
  oidc?: OidcSignIn | undefined
  requestLog: RequestLogReader
  /** Each account's requests per second on this gateway, after sign-in. */
  requestRate: AccountRequestRate
}

/** What a resource's handler is given: the signed-in account, the request, its URL parsed. */
export type AccountCall = { account: Account; request: AccountApiRequest; url: URL; deps: AccountApiDeps }

/** What the account API needs for sign-in through an identity provider (createRequestHandling makes it). */
export type OidcSignIn = {
  client: OidcClient
  /** The claim whose value names the account. */
  claim: string
  /** The state cookie's MAC key (oidcStateMacKey). */
  stateMacKey: Buffer
  /** The redirect URL is https: the browser reaches the gateway over TLS, so cookies are Secure. */
  secure: boolean
  findAccount(name: string): Promise<Account | undefined>
  /** Where a refused or failed sign-in is told (a 5xx, or why a check failed). */
  onRefused(err: unknown): void
}
