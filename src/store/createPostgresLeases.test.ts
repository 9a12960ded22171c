import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, onTestDatabase, type TestSchema } from '../../test/helpers/createTestSchema.ts'
import { startTcpProxy } from '../../test/helpers/startTcpProxy.ts'
import { until } from '../../test/helpers/until.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'

/** The backends holding one lease's lock (class 'leas', the schema and name hashed), as pg_locks shows. */
async function lockHolders(schema: string, name: string): Promise<number[]> {
  return onTestDatabase(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1
       AND objid::bigint = (hashtext($2)::bigint + 4294967296) % 4294967296`,
      [0x6c656173, `${schema}:${name}`],
    )
    return rows.map((row) => row.pid)
  })
}

describe('leases on PostgreSQL (session advisory locks)', () => {
  let schema: TestSchema
  const opened: Stores[] = []
  const open = async (url = schema.url) => {
    const stores = await createStores({ postgres: url }, { exclusive: true })
    opened.push(stores)
    return stores
  }
  before(async () => {
    schema = await createTestSchema()
  })
  after(async () => {
    await Promise.all(opened.map((stores) => stores.close()))
    await schema.drop()
  })

  it('one holder among three; when it goes, another takes the lease; a lost session loses it', async () => {
    const instances = [await open(), await open(), await open()]
    const name = `fee-indexer:${Math.floor(Math.random() * 1e9)}`
    const leases = instances.map((stores) => stores.lead(name))
    const changes = leases.map(() => [] as boolean[])
    for (const [index, lease] of leases.entries()) {
      lease.onChange((held) => {
        changes[index]?.push(held)
      })
    }
    const holders = () => leases.filter((lease) => lease.held())
    await until(() => holders().length === 1, 'one holder')
    const first = leases.findIndex((lease) => lease.held())
    assert.equal((await lockHolders(schema.schema, name)).length, 1)

    // the holder closes: its session ends, another process takes the lease
    await instances[first]?.close()
    await until(() => holders().length === 1 && !leases[first]?.held(), 'another holder')
    const second = leases.findIndex((lease) => lease.held())
    assert.notEqual(second, first)
    assert.deepEqual(changes[first], [true, false])

    // the holder's session is ended by the server: it loses the lease (told at once), and one of the
    // two left takes it again
    const [pid] = await lockHolders(schema.schema, name)
    assert.ok(pid)
    await onTestDatabase((client) => client.query('SELECT pg_terminate_backend($1)', [pid]))
    await until(() => changes[second]?.includes(false) === true, 'the holder told of its loss')
    await until(
      async () => holders().length === 1 && (await lockHolders(schema.schema, name)).length === 1,
      'a holder again',
    )
  })

  it('a holder whose database goes away loses the lease at once and another takes it; back, it waits its turn', async () => {
    const proxy = await startTcpProxy(schema.url)
    try {
      const name = `fee-indexer:${Math.floor(Math.random() * 1e9)}`
      const far = (await open(proxy.url)).lead(name)
      await until(() => far.held(), 'the first holder')
      const lost: boolean[] = []
      far.onChange((held) => lost.push(held))
      const nearStores = await open()
      const near = nearStores.lead(name)
      proxy.cut()
      await until(() => lost.includes(false), 'the loss told')
      assert.equal(far.held(), false)
      await until(() => near.held(), 'the other holder')
      proxy.restore()
      // the first one reconnects and tries again: the lock stays where it is, until its holder goes
      await until(async () => (await lockHolders(schema.schema, name)).length === 1, 'one lock')
      assert.equal(far.held(), false)
      await nearStores.close()
      await until(() => far.held(), 'the first one holding again, reconnected')
      assert.deepEqual(lost, [false, true])
    } finally {
      await proxy.close()
    }
  })
})
