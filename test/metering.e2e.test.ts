import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** docs/compatibility.md §2's prices, written out here independently of src/methods. */
const price: Record<string, number> = {
  eth_blockNumber: 80,
  eth_chainId: 5,
  eth_getBlockByNumber: 80,
  eth_getProof: 150,
  eth_getBlockReceipts: 1000,
  eth_call: 80,
  eth_getStorageAt: 80,
}
const badInput = 5
const batchEnvelope = 80
const bigLimit = 1_000_000_000

function frozenClock(iso: string) {
  let now = Date.parse(iso)
  return { now: () => now, set: (value: string) => (now = Date.parse(value)) }
}

type Planned = { path: 'devnet' | 'broken'; body: unknown; expected: number }

describe('charging: 2,000 parallel calls across keys, methods, batches and refusals', () => {
  let node: TestNode
  let broken: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 3 })
    broken = await startFakeUpstream({ kind: 'status', status: 500 })
    gateway = await startTestGateway({
      config: {
        networks: [
          { name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] },
          { name: 'broken', chainId: 1, upstreams: [{ url: broken.url }] },
        ],
        upstreams: { timeoutMs: 5_000, headPollMs: 60_000 },
        metering: { flushMs: 100 },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await broken?.close()
    await node?.stop()
  })

  it('charges each key exactly the docs/compatibility.md §2 sum of its calls, and still after a restart', async () => {
    const keys: { key: string; onlyMethods?: string[] }[] = []
    for (let index = 0; index < 3; index++) {
      const { key } = await gateway.app.keyAdmin.create({
        plan: 'custom',
        dailyCredits: bigLimit,
        creditsPerSecond: bigLimit,
      })
      keys.push({ key: key.key })
    }
    const { key: limited } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: bigLimit,
      creditsPerSecond: bigLimit,
    })
    await gateway.app.keyAdmin.addAllowlistEntries(limited.key, 'methods', ['eth_blockNumber', 'eth_chainId'])
    keys.push({ key: limited.key, onlyMethods: ['eth_blockNumber', 'eth_chainId'] })
    await gateway.app.keys.refresh()

    const revert = {
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
    }
    const callCost = (method: string, onlyMethods?: string[]) =>
      onlyMethods && !onlyMethods.includes(method) ? badInput : (price[method] as number)
    const single = (method: string, params: unknown[]) => (onlyMethods?: string[]) => ({
      path: 'devnet' as const,
      body: rpcBody(method, params),
      expected: callCost(method, onlyMethods),
    })
    const kinds: ((onlyMethods?: string[]) => Planned)[] = [
      single('eth_blockNumber', []),
      single('eth_chainId', []),
      single('eth_getBlockByNumber', ['latest', false]),
      single('eth_getProof', [node.fixtures.demo, [], 'latest']),
      single('eth_getBlockReceipts', ['latest']),
      single('eth_call', [revert, 'latest']),
      () => ({ path: 'devnet', body: rpcBody('eth_getBlockByNumber', ['0x01', false]), expected: badInput }),
      () => ({ path: 'devnet', body: rpcBody('eth_doesNotExist', []), expected: badInput }),
      () => ({ path: 'devnet', body: '{"jsonrpc":', expected: badInput }),
      () => ({ path: 'broken', body: rpcBody('eth_blockNumber', []), expected: 0 }),
      (onlyMethods) => ({
        path: 'devnet',
        body: [
          rpcBody('eth_blockNumber', [], 1),
          rpcBody('eth_getStorageAt', [node.fixtures.demo, '0x0', 'latest'], 2),
          rpcBody('eth_getBlockByNumber', ['nope', false], 3),
          { jsonrpc: '2.0', method: 'eth_chainId', params: [] },
        ],
        expected:
          callCost('eth_blockNumber', onlyMethods) +
          callCost('eth_getStorageAt', onlyMethods) +
          badInput +
          callCost('eth_chainId', onlyMethods) +
          batchEnvelope,
      }),
      // both fail upstream (free, and so no envelope), unless the allowlist refuses eth_gasPrice first
      (onlyMethods) => ({
        path: 'broken',
        body: [rpcBody('eth_blockNumber', [], 1), rpcBody('eth_gasPrice', [], 2)],
        expected: onlyMethods ? badInput + batchEnvelope : 0,
      }),
    ]

    let seed = 7
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed / 2 ** 31
    }
    const plan = Array.from({ length: 2_000 }, (_, index) => {
      const key = keys[index % keys.length] as (typeof keys)[number]
      const kind = kinds[Math.floor(random() * kinds.length)] as (typeof kinds)[number]
      return { key: key.key, ...kind(key.onlyMethods) }
    })

    const charged = new Map<string, number>()
    let next = 0
    const worker = async () => {
      while (next < plan.length) {
        const request = plan[next++] as (typeof plan)[number]
        const response = await postJson(`${gateway.url}/${request.path}/v3/${request.key}`, request.body)
        assert.ok(response.status !== 402 && response.status !== 429, `not limited: ${response.text}`)
        const header = Number(response.headers.get('x-credits-charged'))
        charged.set(request.key, (charged.get(request.key) ?? 0) + header)
      }
    }
    await Promise.all(Array.from({ length: 250 }, worker))

    const expected = new Map<string, number>()
    for (const request of plan) expected.set(request.key, (expected.get(request.key) ?? 0) + request.expected)
    assert.deepEqual(charged, expected, 'X-Credits-Charged adds up to the docs/compatibility.md §2 sums')

    const spent = async () => {
      const out = new Map<string, number>()
      for (const { key } of keys) {
        const entry = gateway.app.keys.findActiveKey(key)
        assert.ok(entry)
        out.set(key, bigLimit - gateway.app.meter.remainingCredits(entry.subject))
      }
      return out
    }
    assert.deepEqual(await spent(), expected, 'the balances')

    await gateway.app.meter.flush()
    const history = await gateway.app.meter.flush().then(() => usageByKey(gateway))
    assert.deepEqual(history, expected, 'the usage history')

    // restart on the same database: nothing reset, nothing lost
    await gateway.restart()
    assert.deepEqual(await spent(), expected, 'the balances after a restart')
    assert.deepEqual(await usageByKey(gateway), expected, 'the usage history after a restart')
  })
})

async function usageByKey(gateway: TestGateway): Promise<Map<string, number>> {
  const keys = new Map((await gateway.app.keyAdmin.list()).map((key) => [key.id, key.key]))
  const rows = await gateway.app.usageStore.queryUsage({ fromDay: '2000-01-01' })
  const out = new Map<string, number>()
  for (const row of rows) {
    const key = keys.get(row.keyId) as string
    if (key === gateway.key) continue
    out.set(key, (out.get(key) ?? 0) + row.credits)
  }
  for (const [key, credits] of out) if (credits === 0) out.delete(key)
  return out
}

describe('daily balance and rate limits', () => {
  let node: TestNode
  let gateway: TestGateway
  const clock = frozenClock('2026-11-22T23:59:00Z')

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url], clock })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const call = (key: string, id: number, method = 'eth_blockNumber') =>
    postJson(`${gateway.url}/v3/${key}`, rpcBody(method, [], id))

  it('a key that cannot pay gets the exact 402, and serves again once the UTC day turns', async () => {
    const { key } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: 400,
      creditsPerSecond: 100_000,
    })
    await gateway.app.keys.refresh()
    for (let id = 1; id <= 5; id++) {
      const response = await call(key.key, id)
      assert.equal(response.status, 200)
      assert.equal(response.headers.get('x-credits-charged'), '80')
      assert.equal(response.headers.get('x-credits-remaining'), String(400 - id * 80))
      assert.equal(response.headers.get('x-ratelimit-reset'), '60')
      assert.equal(response.headers.get('retry-after'), null)
    }
    const refused = await call(key.key, 6)
    assert.equal(refused.status, 402)
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: 6,
      error: {
        code: 402,
        event: -33000,
        message: 'Payment Required',
        details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
      },
    })
    assert.equal(refused.headers.get('x-credits-charged'), '0')
    assert.equal(refused.headers.get('x-credits-remaining'), '0')
    assert.equal(refused.headers.get('retry-after'), '60', 'until 00:00 UTC')
    const badInput = await postJson(`${gateway.url}/v3/${key.key}`, '{not json')
    assert.equal(badInput.status, 402, 'not even 5 credits for bad input')

    clock.set('2026-11-23T00:00:00Z')
    const nextDay = await call(key.key, 7)
    assert.equal(nextDay.status, 200)
    assert.equal(nextDay.headers.get('x-credits-remaining'), '320')
    assert.equal(nextDay.headers.get('x-ratelimit-reset'), '86400')
  })

  it('the three 429s carry their event codes and cost nothing', async () => {
    const expected = (id: number, event: number, details: string) => ({
      jsonrpc: '2.0',
      id,
      error: { code: 429, event, message: 'Too Many Requests', details },
    })

    const { key: core } = await gateway.app.keyAdmin.create({ plan: 'core' })
    const { key: ownRate } = await gateway.app.keyAdmin.create({ plan: 'team', creditsPerSecond: 100 })
    const { key: ownDay } = await gateway.app.keyAdmin.create({ plan: 'team', dailyCredits: 100 })
    await gateway.app.keys.refresh()

    // core: 500 credits per second; the clock stands still, so the bucket does not refill
    for (let id = 1; id <= 6; id++) assert.equal((await call(core.key, id)).status, 200)
    const plan = await call(core.key, 7)
    assert.equal(plan.status, 429)
    assert.deepEqual(
      plan.json,
      expected(
        7,
        -33200,
        "You have exceeded your plan's credits per second throughput limit. Slow down or upgrade your plan.",
      ),
    )
    assert.equal(plan.headers.get('x-credits-charged'), '0')
    assert.equal(plan.headers.get('x-credits-remaining'), String(3_000_000 - 480))
    assert.equal(plan.headers.get('retry-after'), '1', 'the bucket holds 80 again within a second')
    const toMidnight = String(gateway.app.meter.secondsToReset())
    assert.equal(plan.headers.get('x-ratelimit-reset'), toMidnight, 'the daily reset, not the bucket')
    // a 5-credit call still fits in what is left of the second
    assert.equal((await call(core.key, 8, 'eth_chainId')).status, 200)

    assert.equal((await call(ownRate.key, 1)).status, 200)
    const keyRate = await call(ownRate.key, 2)
    assert.equal(keyRate.status, 429)
    assert.deepEqual(
      keyRate.json,
      expected(2, -33300, "You have exceeded this key's own credits per second throughput limit."),
    )

    assert.equal((await call(ownDay.key, 1)).status, 200)
    const keyDay = await call(ownDay.key, 2)
    assert.equal(keyDay.status, 429)
    assert.deepEqual(
      keyDay.json,
      expected(2, -33400, "You have reached this key's own daily credit limit. It resets at 00:00 UTC."),
    )
    assert.equal(keyDay.headers.get('x-credits-remaining'), '20')
    assert.equal(
      keyDay.headers.get('retry-after'),
      toMidnight,
      'a key limit of its own resets at 00:00 UTC too',
    )
  })

  it('a batch is admitted or refused as a whole', async () => {
    const { key } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: 300,
      creditsPerSecond: 100_000,
    })
    await gateway.app.keys.refresh()
    const batch = [
      rpcBody('eth_blockNumber', [], 1),
      rpcBody('eth_blockNumber', [], 2),
      rpcBody('eth_blockNumber', [], 3),
    ]
    const refused = await postJson(`${gateway.url}/v3/${key.key}`, batch)
    assert.equal(refused.status, 402, '3 x 80 + 80 for the batch is more than 300')
    assert.equal((refused.json as { id: unknown }).id, null)
    const smaller = await postJson(`${gateway.url}/v3/${key.key}`, batch.slice(0, 2))
    assert.equal(smaller.status, 200)
    assert.equal(smaller.headers.get('x-credits-charged'), '240')
  })
})
