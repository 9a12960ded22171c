import type { AccountStore } from '../accounts/accountStore.ts'
import type { AlertStore } from '../alerts/alertStore.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { FeeHistoryStore } from '../gas/feeHistoryStore.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import type { RequestLogStore } from '../requestLog/requestLogStore.ts'
import type { Leadership } from '../store/leadership.ts'

/** Every store the gateway and the CLI use, on one database; nothing here names the driver. */
export type Stores = {
  keys: KeyStore
  /** Accounts' sign-in tokens (the account API). */
  accounts: AccountStore
  usage: UsageStore
  /** Usage alerts: settings, events, their deliveries. */
  alerts: AlertStore
  feeHistory: FeeHistoryStore
  /** The request log key holders read (a sample of calls, every error and refusal). */
  requestLog: RequestLogStore
  /**
   * Key and account changes by other processes, as they commit (PostgreSQL: LISTEN/NOTIFY); undefined
   * where only the key registry's interval check finds them (SQLite: one gateway per file).
   */
  watchKeys: ((listener: () => void) => () => void) | undefined
  /**
   * The right to do `name`'s work alone among every gateway on this database (PostgreSQL: a session
   * advisory lock; SQLite: this process, always).
   */
  lead(name: string): Leadership
  /** Whether the database answers now; readiness asks it. A network database may answer later. */
  ping(): Promise<boolean>
  /** Closes the connection and lets go of the database (an SQLite file's lock). */
  close(): Promise<void>
}

export type CreateStoresOptions = {
  /**
   * This process is the one gateway on the database: an SQLite file is locked for it (a second
   * gateway refuses to start). The CLI is not exclusive: it edits keys beside a running gateway.
   * PostgreSQL is shared by any number of gateways: nothing is locked there.
   */
  exclusive: boolean
  /** A connection kept for notifications or leases failed (it is reopened). */
  onSessionError?: (err: unknown) => void
  /** An SQLite file others could read was made private (openSqlite); default: a line on stderr. */
  onWarning?: (message: string) => void
}
