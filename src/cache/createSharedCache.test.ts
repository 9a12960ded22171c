import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  createTestPrefix,
  type RedisServer,
  startRedisServer,
  type TestPrefix,
} from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { createRpcCache, type FetchedAnswer } from './createRpcCache.ts'
import { createSharedCache, type SharedCache } from './createSharedCache.ts'

const answerOf = (resultText: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${resultText}}`)
const fromNode = (text: string, partner = false) => {
  let calls = 0
  return {
    load: async (): Promise<FetchedAnswer> => {
      calls++
      return { body: answerOf(text), partner }
    },
    get calls() {
      return calls
    },
  }
}
const memory = { maxBytes: 1 << 20, maxEntryBytes: 1 << 20 }

describe('createSharedCache on a real Redis', () => {
  let prefix: TestPrefix
  const opened: SharedCache[] = []
  const open = async (options: { ttlSeconds?: number; maxBytes?: number } = {}) => {
    const shared = await createSharedCache({
      url: 'redis://127.0.0.1:6379',
      keyPrefix: prefix.keyPrefix,
      ttlSeconds: options.ttlSeconds ?? 3600,
      maxBytes: options.maxBytes ?? 1 << 20,
      // roomy: these tests are about what is shared; a busy machine can delay a reply past 50 ms
      waitMs: 2_000,
      headGraceMs: 20,
    })
    opened.push(shared)
    return shared
  }
  const books = (chainId: number, field: string) => `${prefix.keyPrefix}cache:${chainId}:~${field}`

  before(() => {
    prefix = createTestPrefix()
  })
  after(async () => {
    for (const shared of opened) await shared.close()
    await prefix.remove()
  })

  it('what one instance keeps, another reads; long keys are kept under their hash', async () => {
    const [one, two] = [await open(), await open()]
    const short = 'eth_getBlockByHash["0x01",false]'
    const long = `eth_call[${JSON.stringify({ data: `0x${'ab'.repeat(200)}` })},"0x10"]`
    one.forNetwork(1).store.put(short, '{"a":1}')
    one.forNetwork(1).store.put(long, Buffer.from('"0xlong"'))
    await until(async () => (await prefix.redis.zcard(books(1, 'index'))) === 2, 'both kept')
    assert.equal((await two.forNetwork(1).store.get(short))?.toString(), '{"a":1}')
    assert.equal((await two.forNetwork(1).store.get(long))?.toString(), '"0xlong"')
    assert.equal(await two.forNetwork(2).store.get(short), undefined, 'another chain has its own')
    const keys = await prefix.redis.zrange(books(1, 'index'), '0', '-1')
    assert.ok(keys.every((key) => key.length < 200))
    assert.deepEqual(two.stats, { hits: 2, misses: 1, failures: 0, puts: 0 })
  })

  it('the byte budget holds, the soonest-expiring go first, and an entry larger than it is not kept', async () => {
    const shared = await open({ maxBytes: 4_000 })
    const { store } = shared.forNetwork(7)
    const value = `"${'x'.repeat(500)}"`
    for (let index = 0; index < 20; index++) store.put(`k${index}`, value)
    store.put('huge', `"${'y'.repeat(5_000)}"`)
    store.put('last', value)
    await until(async () => (await store.get('last')) !== undefined, 'the last put')
    const total = Number(await prefix.redis.get(books(7, 'bytes')))
    const sizes = await prefix.redis.hvals(books(7, 'sizes'))
    assert.ok(total <= 4_000 && total > 3_000, `${total} bytes`)
    assert.equal(
      sizes.reduce((sum, size) => sum + Number(size), 0),
      total,
    )
    assert.equal(await store.get('huge'), undefined)
    // the oldest went, the newest stayed
    assert.equal(await store.get('k0'), undefined)
    assert.ok((await store.get('k19')) !== undefined)
    const kept = await prefix.redis.zrange(books(7, 'index'), '0', '-1')
    assert.equal(kept.length, sizes.length)
    for (const key of kept) assert.equal(await prefix.redis.exists(key), 1)
  })

  it('answers expire after ttlSeconds, and the books drop them', async () => {
    const shared = await open({ ttlSeconds: 1 })
    const { store } = shared.forNetwork(8)
    store.put('brief', '"0x1"')
    await until(async () => (await store.get('brief')) !== undefined, 'kept')
    await until(async () => (await store.get('brief')) === undefined, 'expired')
    store.put('next', '"0x2"')
    await until(async () => (await store.get('next')) !== undefined, 'the next kept')
    assert.deepEqual(await prefix.redis.hkeys(books(8, 'sizes')), [`${prefix.keyPrefix}cache:8:next`])
  })

  it('the highest head shown is shared, never lowered, and read by an instance that starts later', async () => {
    const [one, two] = [await open(), await open()]
    const [a, b] = [one.forNetwork(9).head, two.forNetwork(9).head]
    await until(async () => {
      const [, count] = (await prefix.redis.pubsub('NUMSUB', `${prefix.keyPrefix}heads`)) as [string, number]
      return Number(count) === opened.length
    }, 'every instance to subscribe')
    // a number found is not shown until Redis has it, with its time, and the grace has passed
    const raising = a.show(100n)
    assert.ok(raising, 'a raise to wait for')
    assert.equal(a.shown, 0n)
    assert.equal(a.show(90n), raising, 'a lower number found meanwhile waits for the same raise')
    await raising
    assert.equal(a.shown, 100n)
    const [kept, raisedAt] = await prefix.redis.mget(
      `${prefix.keyPrefix}head:9`,
      `${prefix.keyPrefix}head:9:at`,
    )
    assert.equal(kept, '100')
    const [seconds = 0, micros = 0] = await prefix.redis.time()
    const redisNowUs = BigInt(seconds) * 1_000_000n + BigInt(micros)
    assert.ok(
      raisedAt && BigInt(raisedAt) <= redisNowUs && BigInt(raisedAt) > redisNowUs - 60_000_000n,
      raisedAt ?? '',
    )
    // the other instance shows it from the same moment (to within the clocks' offsets)
    await until(() => b.shown === 100n, 'the other instance to show 100')
    assert.equal(b.show(50n), undefined, 'nothing to wait for below the shown head')
    assert.equal(b.shown, 100n)
    await b.show(101n)
    await until(() => a.shown === 101n, 'the first to show 101')
    const late = (await open()).forNetwork(9).head
    await until(() => late.shown === 101n, 'a later instance to read 101')
    // a number already raised higher (here by hand) is what is shown
    await prefix.redis.set(`${prefix.keyPrefix}head:9`, '150')
    await a.show(120n)
    assert.equal(a.shown, 150n)
  })

  it('an RPC cache asks the shared one on an immutable miss, keeps only what the memory cache keeps', async () => {
    const [one, two] = [await open(), await open()]
    const first = createRpcCache({ ...memory, shared: one.forNetwork(10).store })
    const second = createRpcCache({ ...memory, shared: two.forNetwork(10).store })
    const block = fromNode('{"number":"0x5"}')
    await first.load('block', 'immutable', block.load)
    await until(async () => (await prefix.redis.zcard(books(10, 'index'))) === 1, 'the block kept')

    // ten calls at once on the other instance: one Redis lookup, no upstream call
    const lookups = two.stats.hits + two.stats.misses
    const never = fromNode('"wrong"')
    const loaded = await Promise.all(
      Array.from({ length: 10 }, () => second.load('block', 'immutable', never.load)),
    )
    assert.equal(never.calls, 0)
    assert.equal(two.stats.hits + two.stats.misses - lookups, 1)
    for (const each of loaded) assert.deepEqual(each, { result: '{"number":"0x5"}' })
    assert.equal(second.get('block', 'immutable', 3), '{"jsonrpc":"2.0","id":3,"result":{"number":"0x5"}}')
    assert.equal(second.stats.sharedHits, 1)

    // head answers, nulls, errors and partners' answers stay where they were fetched
    const before = two.stats.hits + two.stats.misses
    await first.load('balance', 'head', fromNode('"0x1"').load)
    await first.load('missing', 'immutable', fromNode('null').load)
    await first.load('partner', 'immutable', fromNode('"0x2"', true).load)
    await first.load('failed', 'immutable', async () => ({
      body: Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy"}}'),
      partner: false,
    }))
    await first.load('after', 'immutable', fromNode('"0x3"').load)
    await until(async () => (await prefix.redis.zcard(books(10, 'index'))) === 2, 'the last kept')
    assert.equal(await prefix.redis.hexists(books(10, 'sizes'), `${prefix.keyPrefix}cache:10:after`), 1)
    await second.load('balance', 'head', fromNode('"0x1"').load)
    assert.equal(two.stats.hits + two.stats.misses, before, 'a head call never asks Redis')
  })
})

describe('createSharedCache while Redis fails', () => {
  let server: RedisServer
  let shared: SharedCache

  before(async () => {
    server = await startRedisServer()
    shared = await createSharedCache({
      url: server.url,
      keyPrefix: 'tollgate-test:',
      ttlSeconds: 60,
      maxBytes: 1 << 20,
      // the default: the test stops Redis answering and sees the lookup give up
      waitMs: 50,
      headGraceMs: 20,
    })
  })
  after(async () => {
    await shared?.close()
    await server?.stop()
  })

  it('a Redis that does not answer (stopped by signal) or is gone is a miss, never an error', async () => {
    const { store, head } = shared.forNetwork(1)
    const cache = createRpcCache({ ...memory, shared: store })
    store.put('kept', '"0x1"')
    await until(async () => (await store.get('kept')) !== undefined, 'kept')

    const probe = createTestPrefix(server.url)
    const pid = Number(/process_id:(\d+)/.exec(await probe.redis.info('server'))?.[1])
    probe.redis.disconnect()
    assert.ok(pid > 0)
    process.kill(pid, 'SIGSTOP')
    try {
      const failures = shared.stats.failures
      assert.equal(await store.get('kept'), undefined)
      assert.equal(shared.stats.failures, failures + 1)
      const node = fromNode('"0x1"')
      assert.deepEqual(await cache.load('kept', 'immutable', node.load), { result: '"0x1"' })
      assert.equal(node.calls, 1, 'the upstream answered')
      // the raise times out: shown as by a single instance
      await head.show(5n)
      assert.equal(head.shown, 5n)
    } finally {
      process.kill(pid, 'SIGCONT')
    }

    await server.stop()
    const node = fromNode('"0x2"')
    assert.deepEqual(await cache.load('other', 'immutable', node.load), { result: '"0x2"' })
    assert.equal(node.calls, 1)
    store.put('nowhere', '"0x3"')
    // Redis gone: shown as by a single instance
    await head.show(6n)
    assert.equal(head.shown, 6n)
  })

  it('an instance started while Redis is down serves on, and shares once Redis is up', async () => {
    await server.stop()
    const open = () =>
      createSharedCache({
        url: server.url,
        keyPrefix: 'tollgate-test-late:',
        ttlSeconds: 60,
        maxBytes: 1 << 20,
        waitMs: 2_000,
        headGraceMs: 20,
      })
    const [one, two] = [await open(), await open()]
    try {
      const { store, head } = one.forNetwork(3)
      assert.equal(await store.get('anything'), undefined)
      store.put('anything', '"0x1"')
      head.show(7n)
      await server.start()
      // both reconnect by themselves: what one keeps and shows then reaches the other
      await until(async () => {
        store.put('later', '"0x2"')
        return (await two.forNetwork(3).store.get('later'))?.toString() === '"0x2"'
      }, 'the shared store to work')
      // both subscribed (the SUBSCRIBE waited for the connection): a raise reaches the other
      const looker = createTestPrefix(server.url)
      try {
        await until(async () => {
          const [, count] = (await looker.redis.pubsub('NUMSUB', 'tollgate-test-late:heads')) as [
            string,
            number,
          ]
          return Number(count) === 2
        }, 'both instances to subscribe')
      } finally {
        looker.redis.disconnect()
      }
      const other = two.forNetwork(3).head
      await head.show(100n)
      await until(() => other.shown === 100n, 'the head to be announced')
    } finally {
      await one.close()
      await two.close()
    }
  })
})
