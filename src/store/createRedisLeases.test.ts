import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Redis } from 'ioredis'
import { createTestPrefix, type TestPrefix } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { createRedisLeases, type RedisLeases } from './createRedisLeases.ts'
import { openRedis } from './openRedis.ts'

describe('leases on Redis', () => {
  let prefix: TestPrefix
  const clients: Redis[] = []
  const made: RedisLeases[] = []
  /** One process's leases, on a client of its own. */
  async function process(leaseMs = 400): Promise<{ leases: RedisLeases; redis: Redis }> {
    const redis = await openRedis(prefix.url, { commandTimeoutMs: 1_000, name: 'tollgate-test-leases' })
    clients.push(redis)
    const leases = createRedisLeases(redis, {
      keyPrefix: prefix.keyPrefix,
      leaseMs,
      checkMs: 50,
      onError: () => undefined,
    })
    made.push(leases)
    return { leases, redis }
  }
  before(() => {
    prefix = createTestPrefix()
  })
  after(async () => {
    for (const leases of made) await leases.close()
    for (const redis of clients) redis.disconnect()
    await prefix.remove()
  })

  it('one holder among three; a holder that lets go is followed at the next try; one that dies, once its lease expired', async () => {
    const processes = [await process(), await process(), await process()]
    const held = processes.map(({ leases }) => leases.lead('heads'))
    await until(() => held.filter((each) => each.held()).length === 1, 'one holder')
    // a while of renewals: still the same one, never two
    const first = held.findIndex((each) => each.held())
    const changes: boolean[] = []
    held[first]?.onChange((now) => changes.push(now))
    assert.equal((await prefix.redis.pttl(`${prefix.keyPrefix}heads`)) > 0, true)
    for (let round = 0; round < 5; round++) {
      const before = Number(await prefix.redis.pexpiretime(`${prefix.keyPrefix}heads`))
      await until(
        async () => Number(await prefix.redis.pexpiretime(`${prefix.keyPrefix}heads`)) > before,
        'a renewal',
      )
      assert.equal(held.filter((each) => each.held()).length, 1)
    }
    assert.deepEqual(changes, [])

    // let go: its key is deleted, another takes it
    await held[first]?.release()
    assert.equal(held[first]?.held(), false)
    await until(() => held.filter((each) => each.held()).length === 1, 'another holder')
    const second = held.findIndex((each) => each.held())
    assert.notEqual(second, first)

    // dies: its client gone, nothing deleted; the lease expires and the third takes it
    const dying = processes[second] as (typeof processes)[number]
    dying.redis.disconnect()
    const third = held.findIndex((_, index) => index !== first && index !== second)
    await until(() => held[third]?.held() === true, 'the third to take the expired lease')
    assert.equal(held[second]?.held(), false, 'a holder cut off from Redis does not count itself as holding')
  })

  it('shares: the lease is let go of when the last part of the process releases it', async () => {
    const [one, other] = [await process(), await process()]
    const first = one.leases.lead('shared')
    const second = one.leases.lead('shared')
    await until(() => first.held() && second.held(), 'both shares to hold')
    const theirs = other.leases.lead('shared')
    await first.release()
    assert.equal(second.held(), true)
    assert.equal(theirs.held(), false)
    await second.release()
    await until(() => theirs.held(), 'the other process to take it')
  })
})
