import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { raiseHeadScript } from '../src/cache/sharedCacheScripts.ts'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

// The head model (each gateway's head tracker) calls identify, forget and the head view's lower when it
// sees a new chain, blocks at or below finalized that changed, or a rewind: these tests wait for it.
// What one instance's call does to the others through Redis alone (no head model of theirs seeing
// the change) is src/cache/createSharedCache.test.ts's, on a real Redis.

type Block = { hash: string; number: string }

const answer = async (url: string, method: string, params: unknown[] = []) => {
  const response = await postJson(url, rpcBody(method, params))
  return response.status === 200 ? (response.json as { result?: unknown }).result : undefined
}
const result = async (url: string, method: string, params: unknown[] = []) => {
  const response = await postJson(url, rpcBody(method, params))
  assert.equal(response.status, 200, response.text)
  return (response.json as { result: unknown }).result
}
const block = (url: string, number: number) =>
  result(url, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]) as Promise<Block>
const networkOf = (gateway: TestGateway): Network => gateway.app.networks.all[0] as Network

/** anvil's finalized is 64 blocks below its head: a chain of 96 has block 20 finalized. */
const chainBlocks = '0x60'

async function startChain(timestamp: number, port?: number): Promise<Anvil> {
  const anvil = await startAnvil({
    ...(port ? { port } : {}),
    extraArgs: ['--timestamp', String(timestamp)],
  })
  await result(anvil.url, 'anvil_mine', [chainBlocks])
  return anvil
}

/** Two gateways on one Redis in front of `anvil`, each knowing block 20 is finalized. */
async function twoGateways(anvil: Anvil, prefix: TestPrefix): Promise<[TestGateway, TestGateway]> {
  const config = {
    redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
    // roomy: these tests are about what is shared, and a busy machine can be slow
    cache: { shared: { waitMs: 2_000 } },
  }
  const gateways: [TestGateway, TestGateway] = [
    await startTestGateway({ upstreams: [anvil.url], config }),
    await startTestGateway({ upstreams: [anvil.url], config }),
  ]
  for (const gateway of gateways) await untilFinalized(gateway)
  await until(async () => {
    const [, count] = (await prefix.redis.pubsub('NUMSUB', `${prefix.keyPrefix}heads`)) as [string, number]
    return Number(count) === 2
  }, 'both gateways to subscribe')
  return gateways
}

/** Whether Redis keeps block 20 of the chain of `genesis`, in whatever epoch. */
async function keepsBlock20(prefix: TestPrefix, genesis: string): Promise<boolean> {
  const keys = await prefix.redis.keys(`${prefix.keyPrefix}cache:31337:${genesis}:*`)
  return keys.some((key) => key.endsWith(':eth_getBlockByNumber["0x14",false]'))
}

const untilFinalized = (gateway: TestGateway) =>
  until(() => (networkOf(gateway).head.finalized() ?? 0n) >= 20n, 'block 20 to be finalized')

/**
 * Block 20 asked through the first gateway, then through the second (which gets it from Redis):
 * both the node's. Answers the block.
 */
async function sharedBlock20(anvil: Anvil, [first, second]: TestGateway[], prefix: TestPrefix) {
  const direct = await block(anvil.url, 20)
  const genesis = (await block(anvil.url, 0)).hash
  assert.deepEqual(await block((first as TestGateway).endpoint, 20), direct)
  await until(() => keepsBlock20(prefix, genesis), 'block 20 in Redis')
  const cache = networkOf(second as TestGateway).cache
  assert.ok(cache)
  const sharedHits = cache.stats.sharedHits
  assert.deepEqual(await block((second as TestGateway).endpoint, 20), direct)
  assert.equal(cache.stats.sharedHits, sharedHits + 1, 'the second got it from Redis')
  return direct
}

/** Until the gateway answers again (its upstream restarted: the breaker may be open a moment). */
const untilAnswering = (gateway: TestGateway) =>
  until(
    async () => (await answer(gateway.endpoint, 'eth_blockNumber')) !== undefined,
    'the gateway to answer',
  )

for (const restartGateways of [false, true]) {
  describe(`an anvil restarted as a new chain under the same chain id, behind Redis (${
    restartGateways ? 'gateways restarted too' : 'gateways running'
  })`, () => {
    let anvil: Anvil
    let prefix: TestPrefix
    let gateways: [TestGateway, TestGateway]

    before(async () => {
      prefix = createTestPrefix()
      anvil = await startChain(1_700_000_000 + (restartGateways ? 10 : 0))
      gateways = await twoGateways(anvil, prefix)
    })
    after(async () => {
      for (const gateway of gateways ?? []) await gateway.close()
      await anvil?.stop()
      await prefix?.remove()
    })

    it("block 20 is the new chain's, through both gateways", async () => {
      const old = await sharedBlock20(anvil, gateways, prefix)
      const { port } = anvil
      await anvil.stop()
      // another genesis timestamp: another genesis hash, every block after it another
      anvil = await startChain(1_700_000_500 + (restartGateways ? 10 : 0), port)
      const fresh = await block(anvil.url, 20)
      assert.notEqual(fresh.hash, old.hash, 'a new chain')
      const genesis = (await block(anvil.url, 0)).hash
      if (restartGateways) {
        for (const gateway of gateways) await gateway.restart()
        for (const gateway of gateways) await untilFinalized(gateway)
      } else {
        for (const gateway of gateways) {
          await untilAnswering(gateway)
          const network = networkOf(gateway)
          // the head model finds the new genesis under the chain id: the cache takes it (and drops
          // what it kept)
          await until(
            () => network.heads.genesis() === genesis && (network.cache?.stats.forgets ?? 0) >= 1,
            'the gateway to meet the new chain',
          )
          // the same genesis again: only waits for the shared epoch to be read
          await network.cache?.identify(genesis)
          // the tracker asks the new chain's finalized block again: block 20 is kept as final once more
          await untilFinalized(gateway)
        }
      }
      for (const gateway of gateways) assert.deepEqual(await block(gateway.endpoint, 20), fresh)
      // what they keep now is the new chain's, under its genesis
      await until(() => keepsBlock20(prefix, genesis), "the new chain's block 20 in Redis")
    })
  })
}

describe('blocks at or below finalized that change: no instance serves what was cached before', () => {
  let anvil: Anvil
  let prefix: TestPrefix
  let gateways: [TestGateway, TestGateway]
  let snapshot: string

  before(async () => {
    prefix = createTestPrefix()
    anvil = await startAnvil({ extraArgs: ['--timestamp', '1700001000'] })
    snapshot = (await result(anvil.url, 'evm_snapshot')) as string
    await result(anvil.url, 'anvil_mine', [chainBlocks])
    gateways = await twoGateways(anvil, prefix)
  })
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close()
    await anvil?.stop()
    await prefix?.remove()
  })

  it("after a revert below finalized, blocks 20 and 21 are the node's through both", async () => {
    const [first, second] = gateways
    const old20 = await sharedBlock20(anvil, gateways, prefix)
    // block 21 only through the first: in Redis, not in the second's memory
    const old21 = await block(anvil.url, 21)
    assert.deepEqual(await block(first.endpoint, 21), old21)

    // a dev chain rewrites blocks at or below its finalized one
    assert.equal(await result(anvil.url, 'evm_revert', [snapshot]), true)
    await result(anvil.url, 'anvil_mine', [chainBlocks, '0x5'])
    const [new20, new21] = [await block(anvil.url, 20), await block(anvil.url, 21)]
    assert.notEqual(new20.hash, old20.hash, 'block 20 changed')
    assert.notEqual(new21.hash, old21.hash, 'block 21 changed')
    // each head model sees blocks at or below finalized change: a forget, with Redis a new epoch
    const epochKey = `${prefix.keyPrefix}epoch:31337:${(await block(anvil.url, 0)).hash}`
    for (const gateway of gateways) {
      await until(() => (networkOf(gateway).cache?.stats.forgets ?? 0) >= 1, 'the forget')
    }
    await until(async () => (await prefix.redis.exists(epochKey)) === 1, 'the new epoch in Redis')
    for (const gateway of gateways) {
      assert.deepEqual(await block(gateway.endpoint, 20), new20)
      assert.deepEqual(await block(gateway.endpoint, 21), new21)
    }
    const forgets = (await readMetrics(second.url)).value('tollgate_cache_forgets_total', {
      network: 'devnet',
    })
    assert.ok((forgets ?? 0) >= 1, `tollgate_cache_forgets_total: ${forgets}`)
  })
})

describe('a rewind lowers the shown head on every instance', () => {
  let anvil: Anvil
  let prefix: TestPrefix
  let gateways: [TestGateway, TestGateway]
  let snapshot: string

  before(async () => {
    prefix = createTestPrefix()
    anvil = await startAnvil({ extraArgs: ['--timestamp', '1700002000'] })
    await result(anvil.url, 'anvil_mine', ['0x2e'])
    snapshot = (await result(anvil.url, 'evm_snapshot')) as string
    await result(anvil.url, 'anvil_mine', ['0x91'])
    gateways = await twoGateways(anvil, prefix)
  })
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close()
    await anvil?.stop()
    await prefix?.remove()
  })

  it('both answer the lower eth_blockNumber; a raise of the number from before it does not bring it back', async () => {
    const [first, second] = gateways
    for (const gateway of gateways) assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0xbf')
    await until(() => networkOf(second).head.shown === 191n, 'both to show 191')

    assert.equal(await result(anvil.url, 'evm_revert', [snapshot]), true)
    assert.equal(await result(anvil.url, 'eth_blockNumber'), '0x2e')
    // the head models see the rewind (the in-sync upstreams agree on 46) and lower the shown head
    for (const gateway of gateways) {
      await until(() => networkOf(gateway).head.shown <= 46n, 'the shown head to be lowered')
    }
    const generation = await prefix.redis.get(`${prefix.keyPrefix}head:31337:gen`)
    assert.ok(generation && generation !== '0', 'a new generation in Redis')
    for (const gateway of gateways) assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0x2e')

    // an instance that had not heard of the lower raises 191 in the generation before it
    const keys = ['head:31337', 'head:31337:at', 'head:31337:gen'].map((key) => `${prefix.keyPrefix}${key}`)
    const raised = (await prefix.redis.eval(
      raiseHeadScript,
      3,
      ...keys,
      '191',
      `${prefix.keyPrefix}heads`,
      31337,
      3_600_000,
      '0',
      3_600_000,
    )) as unknown[]
    assert.equal(raised[0], 0, 'refused')
    for (const gateway of gateways) assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0x2e')
    assert.equal(networkOf(first).head.shown, 46n)

    // the chain goes on from there: a new block is shown by both
    await result(anvil.url, 'anvil_mine', ['0x1'])
    await until(
      async () => (await result(first.endpoint, 'eth_blockNumber')) === '0x2f',
      'the first to answer 47',
    )
    await until(() => networkOf(second).head.shown === 47n, 'the second to show 47')
    assert.equal(await result(second.endpoint, 'eth_blockNumber'), '0x2f')
  })
})

describe('a rewind lowers the shown head of a single instance (no Redis)', () => {
  let anvil: Anvil
  let gateway: TestGateway
  let snapshot: string

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--timestamp', '1700003000'] })
    await result(anvil.url, 'anvil_mine', ['0x2e'])
    snapshot = (await result(anvil.url, 'evm_snapshot')) as string
    await result(anvil.url, 'anvil_mine', ['0x91'])
    gateway = await startTestGateway({ upstreams: [anvil.url] })
  })
  after(async () => {
    await gateway?.close()
    await anvil?.stop()
  })

  it('eth_blockNumber answers the lower number, not the highest it told before', async () => {
    assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0xbf')
    assert.equal(await result(anvil.url, 'evm_revert', [snapshot]), true)
    // the head model sees the rewind
    await until(() => networkOf(gateway).head.lowers >= 1, 'the shown head to be lowered')
    assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0x2e')
  })
})

describe('an eth_blockNumber answer asked for before a lower is not shown after it', () => {
  let anvil: Anvil
  let upstream: FakeUpstream
  let gateway: TestGateway
  let snapshot: string
  /** While set, the node's eth_blockNumber answers wait for the test (an answer of before the rewind, late). */
  let held: Promise<string> | undefined

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--timestamp', '1700004000'] })
    await result(anvil.url, 'anvil_mine', ['0x2e'])
    snapshot = (await result(anvil.url, 'evm_snapshot')) as string
    await result(anvil.url, 'anvil_mine', ['0x91'])
    upstream = await startFakeUpstream({
      kind: 'rewrite',
      target: anvil.url,
      respond: (request) => (request.method === 'eth_blockNumber' ? held : undefined),
    })
    // the cache off: eth_blockNumber goes to the node (with it on, the head model answers it)
    gateway = await startTestGateway({ upstreams: [upstream.url], config: { cache: { enabled: false } } })
  })
  after(async () => {
    await gateway?.close()
    await upstream?.close()
    await anvil?.stop()
  })

  it('the shown head stays lowered', async () => {
    assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0xbf')
    let release: (number: string) => void = () => {}
    held = new Promise((resolve) => {
      release = resolve
    })
    const asked = upstream.requests.length
    const inFlight = result(gateway.endpoint, 'eth_blockNumber', [])
    await until(
      () => upstream.requests.slice(asked).some((request) => request.method === 'eth_blockNumber'),
      'the call to reach the node',
    )
    held = undefined
    assert.equal(await result(anvil.url, 'evm_revert', [snapshot]), true)
    // the head model sees the rewind
    await until(() => networkOf(gateway).head.lowers >= 1, 'the shown head to be lowered')
    // the node's answer from before the rewind comes after the lower
    release('0xbf')
    assert.equal(await inFlight, '0xbf', 'its caller asked before the rewind')
    assert.ok(networkOf(gateway).head.shown <= 46n, String(networkOf(gateway).head.shown))
    assert.equal(await result(gateway.endpoint, 'eth_blockNumber'), '0x2e')
  })
})

describe("a reorg: a block the chain left, asked by hash, is the node's answer on every instance", () => {
  let anvil: Anvil
  let prefix: TestPrefix
  let gateways: [TestGateway, TestGateway]

  before(async () => {
    prefix = createTestPrefix()
    anvil = await startChain(1_700_005_000)
    gateways = await twoGateways(anvil, prefix)
  })
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close()
    await anvil?.stop()
    await prefix?.remove()
  })

  it('not the copy another instance kept in Redis', async () => {
    const [first, second] = gateways
    const genesis = (await block(anvil.url, 0)).hash
    const left = await block(anvil.url, 95)
    const byHash = (url: string) => result(url, 'eth_getBlockByHash', [left.hash, false])
    assert.deepEqual(await byHash(first.endpoint), left)
    await until(async () => {
      const keys = await prefix.redis.keys(`${prefix.keyPrefix}cache:31337:${genesis}:*`)
      return keys.some((key) => key.endsWith(`eth_getBlockByHash["${left.hash}",false]`))
    }, 'the block in Redis')

    // blocks 94 to 96 replaced, the first of them with a transaction: other hashes
    const [from, to] = (await result(anvil.url, 'eth_accounts')) as string[]
    await result(anvil.url, 'anvil_reorg', [3, [[{ from, to, value: '0x1' }, 0]]])
    assert.notEqual((await block(anvil.url, 95)).hash, left.hash)
    const direct = await byHash(anvil.url)
    assert.equal(direct, null, "anvil's answer for a block it left")
    // a head model saw the reorg: the block is marked as left in Redis
    const marker = `${prefix.keyPrefix}dropped:31337:${genesis}:${left.hash}`
    await until(async () => (await prefix.redis.exists(marker)) === 1, 'the block marked as left')
    const tip = ((await result(anvil.url, 'eth_getBlockByNumber', ['latest', false])) as Block).hash
    for (const gateway of gateways) {
      await until(() => networkOf(gateway).heads.header()?.hash === tip, 'the gateway to follow the reorg')
    }
    // the second never kept it in memory: Redis alone could give it the copy
    assert.equal(await byHash(second.endpoint), direct)
    assert.equal(await byHash(first.endpoint), direct)
  })
})
