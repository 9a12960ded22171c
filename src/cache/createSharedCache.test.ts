import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  createTestPrefix,
  type RedisServer,
  startRedisServer,
  type TestPrefix,
} from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { PartnerAnswer, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import { createRpcCache } from './createRpcCache.ts'
import { createSharedCache, type SharedCache } from './createSharedCache.ts'
import { raiseHeadScript } from './sharedCacheScripts.ts'
import type { SharedStore } from './sharedStore.ts'

/** A lookup that claims nothing: the kept bytes, or undefined. */
async function read(store: SharedStore, key: string): Promise<Buffer | undefined> {
  const found = await store.lookup(key, false)
  return typeof found === 'string' ? undefined : found
}

const answerOf = (resultText: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${resultText}}`)
const fromNode = (text: string, partner = false) => {
  let calls = 0
  return {
    load: async (): Promise<SentAnswer> => {
      calls++
      return partner ? new PartnerAnswer(answerOf(text)) : answerOf(text)
    },
    get calls() {
      return calls
    },
  }
}
const memory = { maxBytes: 1 << 20, maxEntryBytes: 1 << 20 }
const genesis = `0x${'9e'.repeat(32)}`
const otherGenesis = `0x${'7a'.repeat(32)}`

/** A chain's store and head on `shared`, identified as `genesis` (its epoch read). */
async function chainOf(shared: SharedCache, chainId: number, identity = genesis) {
  const network = shared.forNetwork(chainId)
  await network.store.identify(identity)
  return network
}

describe('createSharedCache on a real Redis', () => {
  let prefix: TestPrefix
  const opened: SharedCache[] = []
  const open = async (options: { ttlSeconds?: number; maxBytes?: number } = {}) => {
    const shared = await createSharedCache({
      url: prefix.url,
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
    const [mine, theirs] = [await chainOf(one, 1), await chainOf(two, 1)]
    mine.store.put(short, '{"a":1}')
    mine.store.put(long, Buffer.from('"0xlong"'))
    await until(async () => (await prefix.redis.zcard(books(1, 'index'))) === 2, 'both kept')
    assert.equal((await read(theirs.store, short))?.toString(), '{"a":1}')
    assert.equal((await read(theirs.store, long))?.toString(), '"0xlong"')
    assert.equal(await read((await chainOf(two, 2)).store, short), undefined, 'another chain has its own')
    const keys = await prefix.redis.zrange(books(1, 'index'), '0', '-1')
    assert.ok(keys.every((key) => key.length < 200))
    assert.deepEqual(two.stats, { hits: 2, misses: 1, failures: 0, puts: 0, forgets: 0 })
  })

  it('the byte budget holds, the soonest-expiring go first, and an entry larger than it is not kept', async () => {
    const shared = await open({ maxBytes: 4_000 })
    const { store } = await chainOf(shared, 7)
    const value = `"${'x'.repeat(500)}"`
    for (let index = 0; index < 20; index++) store.put(`k${index}`, value)
    store.put('huge', `"${'y'.repeat(5_000)}"`)
    store.put('last', value)
    await until(async () => (await read(store, 'last')) !== undefined, 'the last put')
    const total = Number(await prefix.redis.get(books(7, 'bytes')))
    const sizes = await prefix.redis.hvals(books(7, 'sizes'))
    assert.ok(total <= 4_000 && total > 3_000, `${total} bytes`)
    assert.equal(
      sizes.reduce((sum, size) => sum + Number(size), 0),
      total,
    )
    assert.equal(await read(store, 'huge'), undefined)
    // the oldest went, the newest stayed
    assert.equal(await read(store, 'k0'), undefined)
    assert.ok((await read(store, 'k19')) !== undefined)
    const kept = await prefix.redis.zrange(books(7, 'index'), '0', '-1')
    assert.equal(kept.length, sizes.length)
    for (const key of kept) assert.equal(await prefix.redis.exists(key), 1)
  })

  it('answers expire after ttlSeconds, and the books drop them', async () => {
    const shared = await open({ ttlSeconds: 1 })
    const { store } = await chainOf(shared, 8)
    store.put('brief', '"0x1"')
    await until(async () => (await read(store, 'brief')) !== undefined, 'kept')
    await until(async () => (await read(store, 'brief')) === undefined, 'expired')
    store.put('next', '"0x2"')
    await until(async () => (await read(store, 'next')) !== undefined, 'the next kept')
    assert.deepEqual(await prefix.redis.hkeys(books(8, 'sizes')), [
      `${prefix.keyPrefix}cache:8:${genesis}:0:next`,
    ])
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
    const first = createRpcCache({ ...memory, shared: (await chainOf(one, 10)).store })
    const second = createRpcCache({ ...memory, shared: (await chainOf(two, 10)).store })
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
    await first.load('failed', 'immutable', async () =>
      Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy"}}'),
    )
    await first.load('after', 'immutable', fromNode('"0x3"').load)
    await until(async () => (await prefix.redis.zcard(books(10, 'index'))) === 2, 'the last kept')
    assert.equal(
      await prefix.redis.hexists(books(10, 'sizes'), `${prefix.keyPrefix}cache:10:${genesis}:0:after`),
      1,
    )
    await second.load('balance', 'head', fromNode('"0x1"').load)
    assert.equal(two.stats.hits + two.stats.misses, before, 'a head call never asks Redis')
  })

  it('while one instance loads an answer, another waits for it instead of asking the node; one that loads nothing lets the others load', async () => {
    const [one, two] = [await open(), await open()]
    const [mine, theirs] = [(await chainOf(one, 14)).store, (await chainOf(two, 14)).store]
    assert.equal(await mine.lookup('call', true), 'claimed')
    assert.equal(await theirs.lookup('call', true), 'wait', 'the claim is held')
    assert.equal(await theirs.lookup('call', false), 'wait')
    mine.put('call', '"0x1"')
    await until(async () => (await theirs.lookup('call', false)) instanceof Buffer, 'the answer put')
    // a released claim: the one waiting loads without claiming, a new caller claims
    assert.equal(await mine.lookup('other', true), 'claimed')
    mine.release('other')
    await until(async () => (await theirs.lookup('other', false)) === 'load', 'the claim given up')
    assert.equal(await theirs.lookup('other', true), 'claimed')

    // two RPC caches: the second's miss waits for the first's load, its upstream never asked
    const first = createRpcCache({ ...memory, shared: mine })
    const second = createRpcCache({ ...memory, shared: theirs })
    let answer: (value: Buffer) => void = () => {}
    const slow = new Promise<Buffer>((resolve) => {
      answer = resolve
    })
    const loading = first.load('slow', 'immutable', () => slow)
    await until(async () => (await theirs.lookup('slow', false)) === 'wait', 'the first to claim')
    const never = fromNode('"wrong"')
    const waiting = second.load('slow', 'immutable', never.load)
    answer(answerOf('"0x2a"'))
    assert.deepEqual(await loading, { result: '"0x2a"' })
    assert.deepEqual(await waiting, { result: '"0x2a"' })
    assert.equal(never.calls, 0)
    assert.equal(second.stats.sharedHits, 1)
    // nothing kept (a null): the other instance asks the node itself
    const nulls = fromNode('null')
    await first.load('nothing', 'immutable', nulls.load)
    await second.load('nothing', 'immutable', nulls.load)
    assert.equal(nulls.calls, 2)
  })
  it("a chain's entries are its genesis's: none read or kept before it is known, none of another genesis", async () => {
    const [one, two] = [await open(), await open()]
    const unknown = one.forNetwork(11)
    unknown.store.put('block', '"before"')
    assert.equal(await read(unknown.store, 'block'), undefined)
    const old = await chainOf(one, 11)
    old.store.put('block', '"old chain"')
    await until(async () => (await read(old.store, 'block')) !== undefined, 'kept')
    assert.equal(await prefix.redis.hlen(books(11, 'sizes')), 1, 'only the identified store kept it')

    // the chain started again under the same chain id: another instance, and one that meets the new
    // genesis while running (its memory cache drops what it kept)
    const restarted = await chainOf(two, 11, otherGenesis)
    assert.equal(await read(restarted.store, 'block'), undefined)
    const memoryCache = createRpcCache({ ...memory, shared: old.store })
    await memoryCache.load('block', 'immutable', fromNode('"old chain"').load)
    assert.equal(memoryCache.get('block', 'immutable', 1), '{"jsonrpc":"2.0","id":1,"result":"old chain"}')
    await memoryCache.identify(otherGenesis.toUpperCase().replace('0X', '0x'))
    assert.equal(memoryCache.get('block', 'immutable', 1), undefined)
    assert.equal(memoryCache.stats.forgets, 1)
    const node = fromNode('"new chain"')
    assert.deepEqual(await memoryCache.load('block', 'immutable', node.load), { result: '"new chain"' })
    assert.equal(node.calls, 1, 'the old entry was not met')
    await until(async () => (await read(restarted.store, 'block'))?.toString() === '"new chain"', 'shared')
    // not a hash: ignored
    await old.store.identify('0x1234')
    assert.equal((await read(old.store, 'block'))?.toString(), '"new chain"')
  })

  it('a forget moves every instance to a new epoch: none reads what was kept before, memory included', async () => {
    const [one, two] = [await open(), await open()]
    await until(async () => {
      const [, count] = (await prefix.redis.pubsub('NUMSUB', `${prefix.keyPrefix}heads`)) as [string, number]
      return Number(count) === opened.length
    }, 'every instance to subscribe')
    const [mine, theirs] = [await chainOf(one, 12), await chainOf(two, 12)]
    const theirCache = createRpcCache({ ...memory, shared: theirs.store })
    mine.store.put('block', '"before"')
    mine.store.put('other', '"before"')
    await until(async () => (await read(theirs.store, 'other')) !== undefined, 'shared')
    await theirCache.load('block', 'immutable', fromNode('"never"').load)
    assert.equal(theirCache.get('block', 'immutable', 1), '{"jsonrpc":"2.0","id":1,"result":"before"}')

    const forgetting = mine.store.forget('a test')
    assert.equal(await read(mine.store, 'block'), undefined, 'at once, on the instance that forgets')
    await forgetting
    assert.equal(one.stats.forgets, 1)
    const [epoch] = await prefix.redis.keys(`${prefix.keyPrefix}epoch:12:${genesis}`)
    assert.ok(epoch)
    // the other hears it: its memory drops the answer, and Redis's old entries are not read
    await until(() => theirCache.stats.forgets === 1, 'the other instance to hear of it')
    assert.equal(theirCache.get('block', 'immutable', 1), undefined)
    assert.equal(await read(theirs.store, 'other'), undefined)
    const node = fromNode('"after"')
    assert.deepEqual(await theirCache.load('block', 'immutable', node.load), { result: '"after"' })
    assert.equal(node.calls, 1)
    await until(
      async () => (await read(mine.store, 'block'))?.toString() === '"after"',
      'kept in the new epoch',
    )
    // an instance started later reads the epoch
    const late = await chainOf(await open(), 12)
    assert.equal((await read(late.store, 'block'))?.toString(), '"after"')
    assert.equal(await read(late.store, 'other'), undefined)
  })

  it('a block the chain left: no instance reads an answer naming its hash again', async () => {
    const [one, two] = [await open(), await open()]
    const [mine, theirs] = [await chainOf(one, 14), await chainOf(two, 14)]
    const left = `0x${'1f'.repeat(32)}`
    const kept = `0x${'2e'.repeat(32)}`
    const byLeft = `eth_getBlockByHash["${left}",false]`
    const byKept = `eth_getBlockReceipts["${kept}"]`
    const call = `eth_call[{"to":"0x${'00'.repeat(20)}"},{"blockHash":"${left.toUpperCase().replace('0X', '0x')}"}]`
    for (const key of [byLeft, byKept, call]) mine.store.put(key, '"kept"')
    await until(async () => (await read(theirs.store, call)) !== undefined, 'shared')
    mine.store.dropBlock(left)
    await until(async () => (await read(theirs.store, byLeft)) === undefined, 'the left block not read')
    assert.equal(await read(theirs.store, call), undefined, 'its hash in any case')
    assert.equal((await read(theirs.store, byKept))?.toString(), '"kept"', 'other blocks are read')
    // the same hash on another chain (genesis) is not touched
    const other = await chainOf(one, 14, otherGenesis)
    other.store.put(byLeft, '"other chain"')
    await until(async () => (await read(other.store, byLeft)) !== undefined, 'kept on the other chain')
  })

  it('a lower is shown by every instance; a raise of a number found before it is refused', async () => {
    const [one, two] = [await open(), await open()]
    await until(async () => {
      const [, count] = (await prefix.redis.pubsub('NUMSUB', `${prefix.keyPrefix}heads`)) as [string, number]
      return Number(count) === opened.length
    }, 'every instance to subscribe')
    const [a, b] = [one.forNetwork(13).head, two.forNetwork(13).head]
    await a.show(191n)
    await until(() => b.shown === 191n, 'the other to show 191')
    let lowered = 0
    b.onLower(() => lowered++)
    await a.lower(46n)
    assert.equal(a.shown, 46n)
    await until(() => b.shown === 46n, 'the other to show the lower number')
    assert.equal(lowered, 1)
    const generation = await prefix.redis.get(`${prefix.keyPrefix}head:13:gen`)
    assert.match(generation ?? '', /^\d{16}$/, "Redis's time, µs")

    // an instance that had not heard of the lower raises 191 in the generation before it
    const stale = await prefix.redis.eval(
      raiseHeadScript,
      3,
      `${prefix.keyPrefix}head:13`,
      `${prefix.keyPrefix}head:13:at`,
      `${prefix.keyPrefix}head:13:gen`,
      '191',
      `${prefix.keyPrefix}heads`,
      13,
      60_000,
      '0',
      60_000,
    )
    assert.deepEqual((stale as unknown[]).slice(0, 2), [0, '46'])
    assert.equal(await prefix.redis.get(`${prefix.keyPrefix}head:13`), '46')
    // and new blocks go on in the new generation, everywhere
    await b.show(47n)
    await until(() => a.shown === 47n, 'the first to show 47')
    assert.equal(await prefix.redis.get(`${prefix.keyPrefix}head:13:gen`), generation)
    // a later instance reads the generation: its old number is refused too
    const late = (await open()).forNetwork(13).head
    await until(() => late.shown === 47n, 'a later instance to read 47')
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
    const { store, head } = await chainOf(shared, 1)
    const cache = createRpcCache({ ...memory, shared: store })
    store.put('kept', '"0x1"')
    await until(async () => (await read(store, 'kept')) !== undefined, 'kept')

    const probe = createTestPrefix(server.url)
    const pid = Number(/process_id:(\d+)/.exec(await probe.redis.info('server'))?.[1])
    probe.redis.disconnect()
    assert.ok(pid > 0)
    process.kill(pid, 'SIGSTOP')
    try {
      const failures = shared.stats.failures
      assert.equal(await read(store, 'kept'), undefined)
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
      // identified while Redis is down: the epoch is read once it is up
      const { store, head } = await chainOf(one, 3)
      const theirs = await chainOf(two, 3)
      assert.equal(await read(store, 'anything'), undefined)
      store.put('anything', '"0x1"')
      head.show(7n)
      await server.start()
      // both reconnect by themselves: what one keeps and shows then reaches the other
      await until(async () => {
        store.put('later', '"0x2"')
        return (await read(theirs.store, 'later'))?.toString() === '"0x2"'
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
      const other = theirs.head
      await head.show(100n)
      await until(() => other.shown === 100n, 'the head to be announced')
    } finally {
      await one.close()
      await two.close()
    }
  })
  it('a dropped block told while Redis is away is marked once it is back: the newest 1,024', async () => {
    const keyPrefix = 'tollgate-test-drops:'
    const options = {
      url: server.url,
      keyPrefix,
      ttlSeconds: 60,
      maxBytes: 1 << 20,
      waitMs: 2_000,
      headGraceMs: 20,
    }
    const [one, two] = [await createSharedCache(options), await createSharedCache(options)]
    const looker = createTestPrefix(server.url)
    try {
      const [mine, theirs] = [await chainOf(one, 5), await chainOf(two, 5)]
      await until(async () => {
        mine.store.put('ready', '"0x1"')
        return (await read(theirs.store, 'ready')) !== undefined
      }, 'the shared store to work')
      await server.stop()
      const hashes = Array.from({ length: 1_030 }, (_, index) => `0x${index.toString(16).padStart(64, '0')}`)
      for (const hash of hashes) mine.store.dropBlock(hash)
      await server.start()
      const marker = (hash: string) => `${keyPrefix}dropped:5:${genesis}:${hash}`
      const newest = hashes.at(-1) as string
      await until(async () => (await looker.redis.get(marker(newest))) === '1', 'the markers to be set')
      await until(
        async () => (await looker.redis.keys(`${keyPrefix}dropped:*`)).length === 1_024,
        'every marker kept to be set',
      )
      assert.equal(await looker.redis.get(marker(hashes[5] as string)), null, 'the oldest went')
      assert.equal(await looker.redis.get(marker(hashes[6] as string)), '1')
      // an answer naming a dropped block, kept by an instance that did not see the reorg, is not read
      const byLeft = `eth_getBlockByHash["${newest}",false]`
      theirs.store.put(byLeft, '"kept"')
      theirs.store.put('other', '"kept"')
      await until(async () => (await read(mine.store, 'other')) !== undefined, 'kept')
      assert.equal(await read(mine.store, byLeft), undefined)
      assert.equal(await read(theirs.store, byLeft), undefined)
    } finally {
      looker.redis.disconnect()
      await one.close()
      await two.close()
    }
  })
})
