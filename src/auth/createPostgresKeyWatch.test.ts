import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, onTestDatabase, type TestSchema } from '../../test/helpers/createTestSchema.ts'
import { startTcpProxy } from '../../test/helpers/startTcpProxy.ts'
import { until } from '../../test/helpers/until.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'
import { loadConfig } from '../config/loadConfig.ts'
import { createKeyRegistry, type KeyRegistry } from './createKeyRegistry.ts'
import { createKeyAdmin } from './keyAdmin.ts'

/** Ends the listening session of this schema's gateway (its last query is the LISTEN of its channel). */
async function terminateListener(schema: string): Promise<number> {
  return onTestDatabase(async (client) => {
    const { rows } = await client.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
       WHERE application_name = 'tollgate key changes'
       AND query = 'LISTEN "tollgate_keys_' || left(md5($1), 16) || '"'`,
      [schema],
    )
    return rows.filter((row) => row.ended).length
  })
}

describe('key changes on PostgreSQL reach another process by LISTEN/NOTIFY', () => {
  let schema: TestSchema
  let gateway: Stores
  let cli: Stores
  let registry: KeyRegistry
  const { plans } = loadConfig(undefined)
  before(async () => {
    schema = await createTestSchema()
    gateway = await createStores({ postgres: schema.url }, { exclusive: true })
    cli = await createStores({ postgres: schema.url }, { exclusive: false })
    // no interval within the test: only a notification (or a reconnection) makes the registry look
    registry = await createKeyRegistry(gateway.keys, plans, {
      refreshMs: 3_600_000,
      watch: gateway.watchKeys,
    })
  })
  after(async () => {
    registry?.close()
    await gateway?.close()
    await cli?.close()
    await schema?.drop()
  })

  it('a key created, changed and revoked by another process takes effect without a refresh asked for', async () => {
    const admin = createKeyAdmin(cli.keys, plans)
    // the listening session opens beside the first load: a change is seen once it listens
    const { key } = await admin.create({ plan: 'developer', name: 'watched' })
    await until(() => registry.findActiveKey(key.key) !== undefined, 'the created key', 5_000)
    const entry = registry.findActiveKey(key.key)
    await admin.addAllowlistEntries(key.key, 'methods', ['eth_chainId'])
    await until(() => registry.findActiveKey(key.key) !== entry, 'the changed key', 5_000)
    assert.deepEqual([...(registry.findActiveKey(key.key)?.access.methods ?? [])], ['eth_chainId'])
    await admin.revoke(key.key)
    await until(() => registry.findActiveKey(key.key) === undefined, 'the revoked key', 5_000)
  })

  it('a change nobody announced is found when the listening connection reconnects (a full version check)', async () => {
    const admin = createKeyAdmin(cli.keys, plans)
    const { key } = await admin.create({ plan: 'developer', name: 'missed' })
    await until(() => registry.findActiveKey(key.key) !== undefined, 'the created key', 5_000)
    // revoked with no notification (triggers off for the session), the version moved by hand: only
    // a version check finds it, and nothing asks for one until the listener reconnects
    await onTestDatabase(async (client) => {
      await client.query(`SET search_path = ${schema.schema}`)
      await client.query(`SET session_replication_role = replica`)
      await client.query('UPDATE api_keys SET revoked_at = now() WHERE key = $1', [key.key])
      await client.query(`UPDATE meta SET value = (value::bigint + 1)::text WHERE name = 'keys_version'`)
    })
    assert.ok(registry.findActiveKey(key.key), 'still active: nothing told the registry')
    assert.equal(await terminateListener(schema.schema), 1)
    await until(() => registry.findActiveKey(key.key) === undefined, 'the revoked key', 10_000)
  })

  it('the database away and back: a change made meanwhile is found once it answers again', async () => {
    const proxy = await startTcpProxy(schema.url)
    const errors: unknown[] = []
    const away = await createStores(
      { postgres: proxy.url },
      { exclusive: true, onSessionError: (err) => errors.push(err) },
    )
    const watched = await createKeyRegistry(away.keys, plans, { refreshMs: 3_600_000, watch: away.watchKeys })
    try {
      const admin = createKeyAdmin(cli.keys, plans)
      const { key } = await admin.create({ plan: 'developer', name: 'outage' })
      await until(() => watched.findActiveKey(key.key) !== undefined, 'the created key', 5_000)
      proxy.cut()
      await until(() => errors.length > 0, 'the listening connection lost')
      await admin.revoke(key.key)
      assert.ok(watched.findActiveKey(key.key), 'still active while the database is away')
      proxy.restore()
      await until(() => watched.findActiveKey(key.key) === undefined, 'the revoked key', 15_000)
    } finally {
      watched.close()
      await away.close()
      await proxy.close()
    }
  })
})
