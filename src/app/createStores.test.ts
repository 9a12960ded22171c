import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import pg from 'pg'
import { createTestSchema, onTestDatabase } from '../../test/helpers/createTestSchema.ts'
import { startTcpProxy } from '../../test/helpers/startTcpProxy.ts'
import { testServers, toPostgresAddress } from '../../test/helpers/testServers.ts'
import { until } from '../../test/helpers/until.ts'
import { createPostgresPool } from '../store/createPostgresPool.ts'
import { DatabaseInUseError } from '../store/lockDatabaseFile.ts'
import { migratePostgres } from '../store/migratePostgres.ts'
import { migrateStorage } from '../store/migrateStorage.ts'
import { postgresMigrations } from '../store/postgresMigrations.ts'
import { sqliteMigrations } from '../store/sqliteMigrations.ts'
import { createStores } from './createStores.ts'

describe('createStores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-stores-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('builds every store on one database, which answers until closed', async () => {
    const stores = await createStores({ sqlite: ':memory:' }, { exclusive: true })
    await stores.keys.setMeta('probe', 'yes')
    assert.equal(await stores.keys.getMeta('probe'), 'yes')
    assert.deepEqual(await stores.usage.queryUsage({ fromDay: '2000-01-01' }), [])
    assert.deepEqual(await stores.feeHistory.storedNumbers(1, 0, 10), [])
    assert.equal(await stores.ping(), true)
    await stores.close()
    assert.equal(await stores.ping(), false)
  })

  it('an exclusive opener holds the file until it closes; others work beside it', async () => {
    const file = join(dir, 'data', 'tollgate.db')
    const gateway = await createStores({ sqlite: file }, { exclusive: true })
    assert.equal(existsSync(`${file}.lock`), true)
    await assert.rejects(createStores({ sqlite: file }, { exclusive: true }), DatabaseInUseError)
    const cli = await createStores({ sqlite: file }, { exclusive: false })
    await cli.keys.setMeta('from', 'cli')
    assert.equal(await gateway.keys.getMeta('from'), 'cli')
    await cli.close()
    assert.equal(existsSync(`${file}.lock`), true)
    await gateway.close()
    assert.equal(existsSync(`${file}.lock`), false)
  })

  it('lets go of the lock when the database cannot be opened', async () => {
    // a folder where the file should be: SQLite cannot open it
    const file = join(dir, 'folder.db')
    mkdirSync(file)
    await assert.rejects(createStores({ sqlite: file }, { exclusive: true }))
    assert.equal(existsSync(`${file}.lock`), false)
  })
})

describe('createStores on SQLite: migrations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-migrate-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('tollgate migrate applies each migration once and reports it', async () => {
    const file = join(dir, 'tollgate.db')
    const first = await migrateStorage({ sqlite: file })
    assert.deepEqual(
      first.applied,
      sqliteMigrations.map(({ name }, i) => ({ version: i + 1, name })),
    )
    assert.equal(first.version, sqliteMigrations.length)
    assert.deepEqual((await migrateStorage({ sqlite: file })).applied, [])
    const stores = await createStores({ sqlite: file }, { exclusive: true })
    assert.equal(await stores.keys.getKeysVersion(), '0')
    await stores.close()
  })
})

describe('createStores on PostgreSQL', () => {
  const schemas: { drop(): Promise<void> }[] = []
  const freshSchema = async (options: { create?: boolean } = {}) => {
    const schema = await createTestSchema(options)
    schemas.push(schema)
    return schema
  }
  after(() => Promise.all(schemas.map((schema) => schema.drop())))

  it('builds every store in the chosen schema, which answers until closed', async () => {
    const { url, schema } = await freshSchema()
    const stores = await createStores({ postgres: url }, { exclusive: true })
    await stores.keys.setMeta('probe', 'yes')
    assert.equal(await stores.keys.getMeta('probe'), 'yes')
    assert.deepEqual(await stores.usage.queryUsage({ fromDay: '2000-01-01' }), [])
    assert.deepEqual(await stores.feeHistory.storedNumbers(1, 0, 10), [])
    assert.equal(await stores.ping(), true)
    const tables = await onTestDatabase(async (client) => {
      const { rows } = await client.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      )
      return rows.map((row) => row.table_name)
    })
    assert.ok(
      tables.includes('api_keys') && tables.includes('usage_hourly') && tables.includes('fee_history'),
    )
    await stores.close()
    await stores.close()
    assert.equal(await stores.ping(), false)
  })

  it("without ?schema= the tables go where the search path says (public, in a database of the test's own)", async () => {
    const database = `tollgate_test_${randomBytes(6).toString('hex')}`
    await onTestDatabase((client) => client.query(`CREATE DATABASE ${database}`))
    try {
      const url = new URL(testServers.postgresUrl)
      url.pathname = `/${database}`
      const stores = await createStores({ postgres: url.toString() }, { exclusive: true })
      await stores.keys.setMeta('where', 'public')
      await stores.close()
      const report = await migrateStorage({ postgres: url.toString() })
      assert.equal(report.database, `postgres ${toPostgresAddress(url.toString())}`)
      assert.deepEqual(report.applied, [])
      const checker = new URL(testServers.postgresUrl)
      checker.pathname = `/${database}`
      const client = new pg.Client({ connectionString: checker.toString() })
      await client.connect()
      try {
        const { rows } = await client.query('SELECT value FROM public.meta WHERE name = $1', ['where'])
        assert.deepEqual(rows, [{ value: 'public' }])
      } finally {
        await client.end()
      }
    } finally {
      await onTestDatabase((client) => client.query(`DROP DATABASE ${database} WITH (FORCE)`))
    }
  })

  it('creates a schema that is missing', async () => {
    const { url, schema } = await freshSchema({ create: false })
    const stores = await createStores({ postgres: url }, { exclusive: false })
    await stores.close()
    const found = await onTestDatabase((client) =>
      client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]),
    )
    assert.equal(found.rowCount, 1)
  })

  it('three instances starting at once on a fresh schema migrate once, and all three work', async () => {
    const { url, schema } = await freshSchema({ create: false })
    const instances = await Promise.all(
      [1, 2, 3].map(() => createStores({ postgres: url }, { exclusive: true })),
    )
    try {
      const recorded = await onTestDatabase(async (client) => {
        const { rows } = await client.query<{ version: number; name: string }>(
          `SELECT version, name FROM ${schema}.tollgate_migrations ORDER BY version`,
        )
        return rows
      })
      assert.deepEqual(
        recorded.map((row) => ({ ...row })),
        postgresMigrations.map(({ name }, i) => ({ version: i + 1, name })),
      )
      for (const [i, stores] of instances.entries()) {
        await stores.keys.setMeta(`instance-${i}`, 'up')
        assert.equal(await instances[(i + 1) % 3]?.keys.getMeta(`instance-${i}`), 'up')
      }
    } finally {
      await Promise.all(instances.map((stores) => stores.close()))
    }
  })

  it('migrators racing on one schema: the migrations are applied once in all, by whichever came first', async () => {
    const { url } = await freshSchema({ create: false })
    const targets = [1, 2, 3].map(() => createPostgresPool(url))
    try {
      const reports = await Promise.all(targets.map((target) => migratePostgres(target)))
      assert.deepEqual(
        reports.flat(),
        postgresMigrations.map(({ name }, i) => ({ version: i + 1, name })),
      )
      assert.equal(reports.filter((applied) => applied.length > 0).length, 1)
      assert.deepEqual(await migratePostgres(targets[0] as (typeof targets)[number]), [])
    } finally {
      await Promise.all(targets.map((target) => target.pool.end()))
    }
  })

  it('tollgate migrate reports what it applied, then nothing', async () => {
    const { url, schema } = await freshSchema({ create: false })
    const first = await migrateStorage({ postgres: url })
    assert.deepEqual(
      first.applied,
      postgresMigrations.map(({ name }, i) => ({ version: i + 1, name })),
    )
    assert.equal(first.database, `postgres ${toPostgresAddress(url)} schema ${schema}`)
    assert.deepEqual((await migrateStorage({ postgres: url })).applied, [])
  })

  it('refuses a schema newer than this tollgate knows', async () => {
    const { url, schema } = await freshSchema({ create: false })
    await migrateStorage({ postgres: url })
    await onTestDatabase((client) =>
      client.query(
        `INSERT INTO ${schema}.tollgate_migrations (version, name) VALUES ($1, 'from the future')`,
        [postgresMigrations.length + 1],
      ),
    )
    await assert.rejects(
      createStores({ postgres: url }, { exclusive: true }),
      /is newer than this tollgate knows/,
    )
  })

  it('refuses a schema name that is not a plain identifier, and says where it cannot connect', async () => {
    const bad = new URL(testServers.postgresUrl)
    bad.searchParams.set('schema', 'x; DROP TABLE y')
    await assert.rejects(
      createStores({ postgres: bad.toString() }, { exclusive: true }),
      /schema 'x; DROP TABLE y' must be/,
    )
    // a port nothing listens on: the one we just had, closed
    const proxy = await startTcpProxy(testServers.postgresUrl)
    const port = proxy.port
    await proxy.close()
    await assert.rejects(
      createStores({ postgres: `postgres://postgres@127.0.0.1:${port}/nowhere` }, { exclusive: true }),
      new RegExp(`cannot open postgres 127.0.0.1:${port}/nowhere: connect ECONNREFUSED`),
    )
  })

  it('a pooled connection the server ends (pg_terminate_backend) is replaced, without a crash', async () => {
    const { url, schema } = await freshSchema()
    // a name only this test's pool carries: the connections ended are this test's own
    const named = new URL(url)
    named.searchParams.set('application_name', schema)
    const stores = await createStores({ postgres: named.toString() }, { exclusive: true })
    try {
      await stores.keys.setMeta('before', 'the end')
      const ended = await onTestDatabase(async (client) => {
        const found = await client.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
          [schema],
        )
        for (const { pid } of found.rows) await client.query('SELECT pg_terminate_backend($1)', [pid])
        return found.rowCount ?? 0
      })
      assert.ok(ended >= 1, 'the pool had a connection to end')
      // each ended connection leaves the pool when its end reaches it: a query may meet one first
      const read = () => stores.keys.getMeta('before').catch(() => undefined)
      await until(async () => (await stores.ping()) && (await read()) === 'the end', 'a new connection')
    } finally {
      await stores.close()
    }
  })

  it('ping follows the server going away and coming back', async () => {
    const { url } = await freshSchema()
    const proxy = await startTcpProxy(url)
    const stores = await createStores({ postgres: proxy.url }, { exclusive: true })
    try {
      assert.equal(await stores.ping(), true)
      proxy.cut()
      await until(async () => (await stores.ping()) === false, 'the ping to fail')
      proxy.restore()
      await until(() => stores.ping(), 'the ping to answer again')
      await stores.keys.setMeta('after', 'the outage')
      assert.equal(await stores.keys.getMeta('after'), 'the outage')
    } finally {
      await stores.close()
      await proxy.close()
    }
  })
})
