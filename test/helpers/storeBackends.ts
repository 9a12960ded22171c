import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStores } from '../../src/app/createStores.ts'
import type { Stores } from '../../src/app/stores.ts'
import type { Config } from '../../src/config/configSchema.ts'
import { createTestSchema } from './createTestSchema.ts'

export type TestDatabase = {
  storage: Config['storage']
  /** Stores on the database, as one more process would open them (the first is the gateway). */
  open(): Promise<Stores>
  /** Closes what open() made and removes the database (the SQLite file, the Postgres schema). */
  remove(): Promise<void>
}

export type StoreBackend = { name: 'sqlite' | 'postgres'; createDatabase(): Promise<TestDatabase> }

/** The backends every store test runs on: one SQLite file, one Postgres schema of the test's own. */
export const storeBackends: StoreBackend[] = [
  {
    name: 'sqlite',
    async createDatabase() {
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-'))
      return trackOpened({ sqlite: join(dir, 'tollgate.db') }, async () =>
        rmSync(dir, { recursive: true, force: true }),
      )
    },
  },
  {
    name: 'postgres',
    async createDatabase() {
      const schema = await createTestSchema()
      return trackOpened({ postgres: schema.url }, schema.drop)
    },
  },
]

function trackOpened(storage: Config['storage'], removeDatabase: () => Promise<void>): TestDatabase {
  const opened: Stores[] = []
  return {
    storage,
    async open() {
      const stores = await createStores(storage, { exclusive: opened.length === 0 })
      opened.push(stores)
      return stores
    },
    async remove() {
      await Promise.all(opened.map((stores) => stores.close()))
      await removeDatabase()
    },
  }
}
