import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Redis } from 'ioredis'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type RedisServer, startRedisServer, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

/** Calls the gateways made for clients, without their head polls. */
const clientCalls = (fake: FakeUpstream, method: string) =>
  fake.requests.filter((request) => request.method === method).length

const result = async (url: string, method: string, params: unknown[] = []) => {
  const answer = await postJson(url, rpcBody(method, params))
  assert.equal(answer.status, 200, answer.text)
  return (answer.json as { result: unknown }).result
}

const budgetBytes = 12_000

/** The hashes of the node's blocks 0..count-1, asked of the node itself. */
function blockHashes(url: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, number) => {
      const block = (await result(url, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false])) as {
        hash: string
      }
      return block.hash
    }),
  )
}

describe('the shared cache: two instances on one Redis, in front of one node', () => {
  let node: TestNode
  let counting: FakeUpstream
  let prefix: TestPrefix
  let first: TestGateway
  let second: TestGateway
  let hashes: string[]
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)

  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    node = await startTestNode({ loadBlocks: 30 })
    counting = await startFakeUpstream({ kind: 'proxy', target: node.url })
    prefix = createTestPrefix()
    const config = {
      redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
      // a roomy wait: these tests are about what is shared, and a busy machine can be slow
      cache: { shared: { maxBytes: budgetBytes, waitMs: 2_000 } },
    }
    first = await startTestGateway({ upstreams: [counting.url], config })
    second = await startTestGateway({ upstreams: [counting.url], config })
    const head = Number(await result(node.url, 'eth_blockNumber'))
    hashes = await blockHashes(node.url, head)
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await first?.close()
    await second?.close()
    await counting?.close()
    await node?.stop()
    await prefix?.remove()
  })

  const books = (field: string) => `${prefix.keyPrefix}cache:31337:~${field}`
  // the chain's genesis, in its first epoch
  const entry = (key: string) => `${prefix.keyPrefix}cache:31337:${hashes[0]}:0:${key}`

  it('a block fetched through one instance is answered by the other without an upstream call', async () => {
    const hash = hashes[3] as string
    const direct = await result(node.url, 'eth_getBlockByHash', [hash, true])
    const before = clientCalls(counting, 'eth_getBlockByHash')
    assert.deepEqual(await result(first.endpoint, 'eth_getBlockByHash', [hash, true]), direct)
    assert.equal(clientCalls(counting, 'eth_getBlockByHash') - before, 1)
    // kept in Redis in the background (a long key: under its hash)
    await until(
      async () => (await prefix.redis.zcard(books('index'))) >= 1,
      'the answer to reach the shared cache',
    )

    const secondCache = second.app.networks.all[0]?.cache
    assert.ok(secondCache)
    assert.deepEqual(await result(second.endpoint, 'eth_getBlockByHash', [hash, true]), direct)
    assert.equal(clientCalls(counting, 'eth_getBlockByHash') - before, 1, 'no upstream call from the second')
    assert.equal(secondCache.stats.sharedHits, 1)
    const metrics = await readMetrics(second.url)
    assert.equal(metrics.value('tollgate_cache_shared_hits_total', { network: 'devnet' }), 1)
    // the Redis hit filled the second's memory: asked again, it is a memory hit
    const hits = secondCache.stats.hits
    assert.deepEqual(await result(second.endpoint, 'eth_getBlockByHash', [hash, true]), direct)
    assert.equal(secondCache.stats.hits, hits + 1)
    assert.equal(secondCache.stats.sharedHits, 1)
  })

  it("answers of the head are shared under the head's hash; nulls are not (errors: the unit test)", async () => {
    const address = node.fixtures.accounts[0] as string
    const headHash = (gateway: TestGateway) => gateway.app.networks.all[0]?.heads.header()?.hash
    await until(() => headHash(first) !== undefined && headHash(first) === headHash(second), 'one head')
    const index = await prefix.redis.zcard(books('index'))
    const balances = clientCalls(counting, 'eth_getBalance')
    assert.equal(
      await result(first.endpoint, 'eth_getBalance', [address, 'latest']),
      await result(node.url, 'eth_getBalance', [address, 'latest']),
    )
    await until(async () => (await prefix.redis.zcard(books('index'))) === index + 1, 'the answer shared')
    await result(second.endpoint, 'eth_getBalance', [address, 'latest'])
    assert.equal(
      clientCalls(counting, 'eth_getBalance') - balances,
      1,
      'the second instance read it from Redis',
    )

    const unknown = `0x${'cd'.repeat(32)}`
    const byHash = clientCalls(counting, 'eth_getBlockByHash')
    assert.equal(await result(first.endpoint, 'eth_getBlockByHash', [unknown, false]), null)
    assert.equal(await result(second.endpoint, 'eth_getBlockByHash', [unknown, false]), null)
    assert.equal(clientCalls(counting, 'eth_getBlockByHash') - byHash, 2)

    // an immutable call after them: once it is in Redis, anything written before it would be too
    const hash = hashes[4] as string
    await result(first.endpoint, 'eth_getBlockByHash', [hash, false])
    await until(
      async () => (await prefix.redis.exists(entry(`eth_getBlockByHash["${hash}",false]`))) === 1,
      'the immutable answer to reach the shared cache',
    )
    assert.equal(
      await prefix.redis.zcard(books('index')),
      index + 2,
      'the head answer and the immutable one only',
    )
  })

  it('the byte budget holds: the soonest-expiring answers go, the books add up', async () => {
    const picked = hashes.slice(5, 25)
    const byHash = clientCalls(counting, 'eth_getBlockByHash')
    for (const hash of picked) await result(first.endpoint, 'eth_getBlockByHash', [hash, false])
    assert.equal(clientCalls(counting, 'eth_getBlockByHash') - byHash, picked.length)
    const last = entry(`eth_getBlockByHash["${picked.at(-1)}",false]`)
    // one connection writes them in order: the last one kept means every one before was handled
    await until(async () => (await prefix.redis.exists(last)) === 1, 'the last answer in the shared cache')

    const redis: Redis = prefix.redis
    const total = Number(await redis.get(books('bytes')))
    const sizes = (await redis.hvals(books('sizes'))).map((size) => Number(size))
    const members = await redis.zrange(books('index'), '0', '-1')
    assert.ok(total <= budgetBytes, `${total} bytes counted, budget ${budgetBytes}`)
    assert.equal(
      sizes.reduce((sum, size) => sum + size, 0),
      total,
    )
    assert.equal(sizes.length, members.length)
    assert.ok(members.length < picked.length + 2, 'some answers were evicted')
    let stored = 0
    for (const member of members) {
      const length = await redis.strlen(member)
      assert.ok(length > 0, `${member} is in the books and in Redis`)
      stored += length
    }
    assert.ok(stored <= budgetBytes)
    // what Redis no longer has is fetched again, right
    const evicted = picked[0] as string
    assert.equal(await redis.exists(entry(`eth_getBlockByHash["${evicted}",false]`)), 0)
    assert.deepEqual(
      await result(second.endpoint, 'eth_getBlockByHash', [evicted, false]),
      await result(node.url, 'eth_getBlockByHash', [evicted, false]),
    )
  })

  it('nothing went unhandled', () => {
    assert.deepEqual(unhandled, [])
  })
})

describe('the highest head shown is shared: eth_blockNumber never goes backwards across instances', () => {
  let node: TestNode
  let lagging: FakeUpstream
  let prefix: TestPrefix
  let ahead: TestGateway
  let behind: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 3 })
    // the second instance's node answers eth_blockNumber from far behind
    lagging = await startFakeUpstream({
      kind: 'rewrite',
      target: node.url,
      respond: (request) => (request.method === 'eth_blockNumber' ? '0x1' : undefined),
    })
    prefix = createTestPrefix()
    const config = { redis: { url: prefix.url, keyPrefix: prefix.keyPrefix } }
    ahead = await startTestGateway({ upstreams: [node.url], config })
    behind = await startTestGateway({ upstreams: [lagging.url], config })
  })
  after(async () => {
    await ahead?.close()
    await behind?.close()
    await lagging?.close()
    await node?.stop()
    await prefix?.remove()
  })

  it('a client bouncing between the two is never told a lower number', async () => {
    let highest = 0
    for (let round = 0; round < 5; round++) {
      await mineIncrement(node)
      for (const gateway of [ahead, behind, ahead, behind]) {
        const number = Number(await result(gateway.endpoint, 'eth_blockNumber'))
        assert.ok(number >= highest, `${number} after ${highest} (round ${round})`)
        highest = number
      }
    }
    // the lagging node says 0x1: the second instance answered higher only from the shared head
    assert.ok(highest > 1)
  })
})

describe('the shared cache while Redis is away: misses, never errors', () => {
  let node: TestNode
  let counting: FakeUpstream
  let server: RedisServer
  let first: TestGateway
  let second: TestGateway
  let hashes: string[]
  let looker: TestPrefix
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)

  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    node = await startTestNode({ loadBlocks: 12 })
    counting = await startFakeUpstream({ kind: 'proxy', target: node.url })
    server = await startRedisServer()
    looker = createTestPrefix(server.url)
    // it reconnects by itself once the server is back
    looker.redis.on('error', () => undefined)
    const config = {
      redis: { url: server.url, keyPrefix: looker.keyPrefix },
      cache: { shared: { waitMs: 2_000 } },
    }
    first = await startTestGateway({ upstreams: [counting.url], config })
    second = await startTestGateway({ upstreams: [counting.url], config })
    hashes = await blockHashes(node.url, 10)
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await first?.close()
    await second?.close()
    await counting?.close()
    await node?.stop()
    looker?.redis.disconnect()
    await server?.stop()
  })

  /**
   * The commands the test's Redis server gets while `act` runs (MONITOR), up to a marker sent after
   * it: every one `act` caused is among them, whatever else the instances do meanwhile.
   */
  const commandsDuring = async (act: () => Promise<void>) => {
    const monitor = await looker.redis.monitor()
    const seen: string[] = []
    monitor.on('monitor', (_time: string, args: string[]) => seen.push(args.join(' ')))
    try {
      await act()
      const marker = `${looker.keyPrefix}marker-${Date.now()}`
      await looker.redis.get(marker)
      await until(() => seen.some((command) => command.includes(marker)), 'the marker in MONITOR')
      return seen
    } finally {
      monitor.disconnect()
    }
  }
  const block = (url: string, hash: string) => result(url, 'eth_getBlockByHash', [hash, false])

  it('an answer served from memory does not touch Redis', async () => {
    const hash = hashes[1] as string
    // the first time, the instance asks Redis for the block (MONITOR shows its key)
    const loading = await commandsDuring(async () => {
      await block(first.endpoint, hash)
    })
    assert.ok(
      loading.some((command) => command.includes(hash)),
      'the first answer was looked up in Redis',
    )
    const commands = await commandsDuring(async () => {
      for (let index = 0; index < 20; index++) await block(first.endpoint, hash)
    })
    assert.deepEqual(
      commands.filter((command) => command.includes(hash)),
      [],
      'no command about the block',
    )
  })

  it('Redis stopped: every answer right, from the upstream; back: shared again', async () => {
    await server.stop()
    const byHash = clientCalls(counting, 'eth_getBlockByHash')
    for (const hash of hashes.slice(2, 6)) {
      const direct = await block(node.url, hash)
      assert.deepEqual(await block(first.endpoint, hash), direct)
      assert.deepEqual(await block(second.endpoint, hash), direct)
    }
    assert.equal(clientCalls(counting, 'eth_getBlockByHash') - byHash, 8, 'each instance asked the node')
    assert.ok(Number(await result(second.endpoint, 'eth_blockNumber')) > 0)

    await server.start()
    // the instances reconnect by themselves; then a block fetched by one is the other's again (a write
    // made as the connection comes back may be lost: each try is a new block, given 5 s to show in Redis)
    await until(async () => {
      const clients = (await looker.redis.client('LIST').catch(() => '')) as string
      return clients.split('\n').filter((line) => line.includes('name=tollgate-cache ')).length === 2
    }, 'both instances to reconnect')
    const fresh = hashes.slice(6)
    let hash = ''
    await until(
      async () => {
        hash = fresh.shift() ?? assert.fail('no block left to try')
        await block(first.endpoint, hash)
        return until(
          async () =>
            (await looker.redis.exists(
              `${looker.keyPrefix}cache:31337:${hashes[0]}:0:eth_getBlockByHash["${hash}",false]`,
            )) === 1,
          'the answer in Redis',
          5_000,
        ).then(
          () => true,
          () => false,
        )
      },
      'the first instance to write to Redis again',
      30_000,
    )
    const before = clientCalls(counting, 'eth_getBlockByHash')
    assert.deepEqual(await block(second.endpoint, hash), await block(node.url, hash))
    assert.equal(clientCalls(counting, 'eth_getBlockByHash'), before)
  })

  it('nothing went unhandled', () => {
    assert.deepEqual(unhandled, [])
  })
})

describe('the embedded devnet is never shared: each instance runs its own chain', () => {
  let other: Anvil
  let prefix: TestPrefix
  let gateway: TestGateway

  before(async () => {
    other = await startAnvil({ chainId: 1337 })
    prefix = createTestPrefix()
    gateway = await startTestGateway({
      config: {
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        devnet: { seed: false, blockTimeSeconds: 0 },
        networks: [{ name: 'other', chainId: 1337, upstreams: [{ url: other.url }] }],
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await other?.stop()
    await prefix?.remove()
  })

  it("the devnet's answers and head stay out of Redis; another network's go in", async () => {
    const devnet = gateway.app.devnet?.anvil
    assert.ok(devnet)
    await result(devnet.url, 'anvil_mine', ['0x5'])
    await result(other.url, 'anvil_mine', ['0x2'])
    const through = (network: string) => `${gateway.url}/${network}/v3/${gateway.key}`
    const blockOf = async (url: string) =>
      ((await result(url, 'eth_getBlockByNumber', ['0x1', false])) as { hash: string }).hash

    // eth_blockNumber is the head model's: it has the new blocks once it heard of them
    await until(async () => (await result(through('devnet'), 'eth_blockNumber')) === '0x5', 'the devnet at 5')
    await result(through('devnet'), 'eth_getBlockByHash', [await blockOf(devnet.url), false])
    // then the same through a network that is shared: one Redis connection writes in order, so once
    // these are in Redis, anything the devnet's calls wrote before them would be too
    await until(async () => (await result(through('other'), 'eth_blockNumber')) === '0x2', 'the other at 2')
    await result(through('other'), 'eth_getBlockByHash', [await blockOf(other.url), false])
    await until(
      async () =>
        (await prefix.redis.exists(`${prefix.keyPrefix}head:1337`)) === 1 &&
        (await prefix.redis.keys(`${prefix.keyPrefix}cache:1337:*eth_getBlockByHash*`)).length === 1,
      "the other network's head and block in Redis",
    )
    const devnetKeys: string[] = []
    let cursor = '0'
    do {
      const [next, keys] = await prefix.redis.scan(
        cursor,
        'MATCH',
        `${prefix.keyPrefix}*31337*`,
        'COUNT',
        1000,
      )
      devnetKeys.push(...keys)
      cursor = next
    } while (cursor !== '0')
    assert.deepEqual(devnetKeys, [])
  })
})
