import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { testServers } from './testServers.ts'

export type TestSchema = {
  schema: string
  /** The test Postgres's URL choosing the schema (`?schema=`), as a tollgate config would. */
  url: string
  /** Drops the schema and everything in it. */
  drop(): Promise<void>
}

/**
 * A fresh, empty schema `tollgate_test_<random>` of its own on the test Postgres (testServers; tests
 * only ever touch schemas they made); `create: false` only names one.
 */
export async function createTestSchema(options: { create?: boolean } = {}): Promise<TestSchema> {
  const schema = `tollgate_test_${randomBytes(6).toString('hex')}`
  if (options.create !== false) await onTestDatabase((client) => client.query(`CREATE SCHEMA ${schema}`))
  const url = new URL(testServers.postgresUrl)
  url.searchParams.set('schema', schema)
  return {
    schema,
    url: url.toString(),
    async drop() {
      await onTestDatabase((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
    },
  }
}

/** Runs `work` on a connection of its own to the test database. */
export async function onTestDatabase<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServers.postgresUrl })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
