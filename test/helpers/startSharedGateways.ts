import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestSchema } from './createTestSchema.ts'
import { startTestGateway, type TestGateway } from './startTestGateway.ts'

/** Gateways on one database: `a` the first, `b` the last (the same one when there is one). */
export type SharedGateways = {
  all: TestGateway[]
  a: TestGateway
  b: TestGateway
  /** Every gateway reads the keys again (one made through another is served at once). */
  refreshKeys(): Promise<void>
  /**
   * Every gateway writes the usage it counted and the request log rows it holds: another instance's
   * reads see them only once written (each writes its own every second or so).
   */
  flush(): Promise<void>
  /** Closes every gateway, then removes the database. */
  close(): Promise<void>
}

export type GatewayStore = {
  name: string
  /** Gateways of `config` (raw fragments, as startTestGateway takes them) on a database of their own. */
  start(config: Record<string, unknown>): Promise<SharedGateways>
}

/**
 * The stores a test of the whole gateway runs on: one gateway on an SQLite file (a single instance),
 * and two on one PostgreSQL schema (many instances: every figure must be the same through either).
 */
export const gatewayStores: GatewayStore[] = [
  {
    name: 'one gateway on SQLite',
    async start(config) {
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-shared-'))
      const gateway = await startTestGateway({
        config: { ...config, storage: { sqlite: join(dir, 'tollgate.db') } },
      })
      return shared([gateway], async () => rmSync(dir, { recursive: true, force: true }))
    },
  },
  {
    name: 'two gateways on one Postgres schema',
    async start(config) {
      const schema = await createTestSchema()
      const gateways: TestGateway[] = []
      // one after the other: the first migrates, both then share the schema
      for (let i = 0; i < 2; i++) {
        gateways.push(await startTestGateway({ config: { ...config, storage: { postgres: schema.url } } }))
      }
      return shared(gateways, schema.drop)
    },
  },
]

function shared(all: TestGateway[], removeDatabase: () => Promise<void>): SharedGateways {
  return {
    all,
    a: all[0] as TestGateway,
    b: all.at(-1) as TestGateway,
    async refreshKeys() {
      await Promise.all(all.map((gateway) => gateway.app.keys.refresh()))
    },
    async flush() {
      for (const gateway of all) {
        await gateway.app.meter.flush()
        await gateway.app.requestLog?.flush()
      }
    },
    async close() {
      for (const gateway of all) await gateway.close()
      await removeDatabase()
    },
  }
}
