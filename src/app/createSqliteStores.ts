import { createSqliteAccountStore } from '../accounts/createSqliteAccountStore.ts'
import { createSqliteAlertStore } from '../alerts/createSqliteAlertStore.ts'
import { createSqliteKeyStore } from '../auth/createSqliteKeyStore.ts'
import { createSqliteFeeHistoryStore } from '../gas/createSqliteFeeHistoryStore.ts'
import { createSqliteUsageStore } from '../metering/createSqliteUsageStore.ts'
import { createSqliteRequestLogStore } from '../requestLog/createSqliteRequestLogStore.ts'
import type { Leadership } from '../store/leadership.ts'
import { lockDatabaseFile } from '../store/lockDatabaseFile.ts'
import { openSqlite } from '../store/openSqlite.ts'
import type { CreateStoresOptions, Stores } from './stores.ts'

/** One gateway per file: it leads everything. */
const soleLeadership: Leadership = { held: () => true, onChange: () => () => {}, sole: true }

/** The stores on one SQLite file (`:memory:` for a throwaway database). */
export function createSqliteStores(file: string, options: CreateStoresOptions): Stores {
  const lock = options.exclusive ? lockDatabaseFile(file) : undefined
  let db: ReturnType<typeof openSqlite>
  try {
    db = openSqlite(file, options.onWarning ? { onWarning: options.onWarning } : {})
  } catch (err) {
    lock?.release()
    throw err
  }
  return {
    keys: createSqliteKeyStore(db),
    accounts: createSqliteAccountStore(db),
    usage: createSqliteUsageStore(db),
    alerts: createSqliteAlertStore(db),
    feeHistory: createSqliteFeeHistoryStore(db),
    requestLog: createSqliteRequestLogStore(db),
    watchKeys: undefined,
    lead: () => soleLeadership,
    async ping() {
      try {
        db.prepare('SELECT 1').get()
        return true
      } catch {
        return false
      }
    },
    async close() {
      try {
        db.close()
      } finally {
        lock?.release()
      }
    },
  }
}
