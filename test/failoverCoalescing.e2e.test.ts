import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ApiKey } from '../src/auth/apiKey.ts'
import type { RpcCache } from '../src/cache/createRpcCache.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

describe('identical calls in flight: each caller keeps its own failover right (docs/compatibility.md §7)', () => {
  let node: TestNode
  let primary: FakeUpstream
  let partner: FakeUpstream
  let gateway: TestGateway
  let cache: RpcCache
  let core: ApiKey
  let growth: ApiKey
  let growthToo: ApiKey

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    primary = await startFakeUpstream({ kind: 'proxy', target: node.url })
    partner = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      config: {
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [{ url: primary.url }],
            partners: [{ url: partner.url, name: 'partner-a' }],
          },
        ],
        // long waits: the primary fails when the test kills it, not on a timer; one head poll, at start
        upstreams: { timeoutMs: 30_000, attemptTimeoutMs: 20_000, headPollMs: 600_000 },
        // the cache (on, as by default) is what joins identical calls
        cache: { enabled: true },
      },
    })
    const create = async (plan: 'core' | 'growth', name: string) =>
      (await gateway.app.keyAdmin.create({ plan, name })).key
    core = await create('core', 'core')
    growth = await create('growth', 'growth')
    growthToo = await create('growth', 'growth-too')
    await gateway.app.keys.refresh()
    cache = gateway.app.networks.all[0]?.cache as RpcCache
  })
  after(async () => {
    await gateway?.close()
    await primary?.close()
    await partner?.close()
    await node?.stop()
  })

  it('on a dead primary, the growth calls get the partner answer with X-Served-By; the core call gets 503, never the partner answer', async () => {
    const receipt = rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 1)
    const receipts = (fake: FakeUpstream) =>
      fake.requests.filter((request) => request.method === 'eth_getTransactionReceipt').length
    const send = (key: ApiKey) =>
      postJson(`${gateway.url}/v3/${key.key}`, receipt, {
        'content-type': 'application/json',
        'enable-failover': 'true',
      })

    primary.behave({ kind: 'hang' })
    const growthCall = send(growth)
    await until(() => receipts(primary) === 1, 'the growth call to reach the primary')
    // the core key may not fail over: it must not join the growth call's load, which may end at the partner
    const coreCall = send(core)
    await until(() => receipts(primary) === 2, 'the core call to make its own upstream call')
    // another key that may fail over joins the growth call's load
    const coalesced = cache.stats.coalesced
    const growthTooCall = send(growthToo)
    await until(() => cache.stats.coalesced === coalesced + 1, 'the second growth call to join the first')
    assert.equal(receipts(primary), 2)

    // the primary dies with the calls in flight
    await primary.kill()
    try {
      const [first, joined, refused] = await Promise.all([growthCall, growthTooCall, coreCall])
      const direct = await postJson(node.url, receipt)
      for (const [label, served] of [
        ['growth', first],
        ['growth, joined', joined],
      ] as const) {
        assert.equal(served.status, 200, label)
        assert.deepEqual(served.json, direct.json, label)
        assert.equal(served.headers.get('x-served-by'), 'partner', label)
      }
      assert.equal(refused.status, 503)
      assert.equal(refused.headers.get('x-served-by'), null)
      assert.deepEqual(refused.json, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32603, message: 'no upstream available, try again later' },
      })
      assert.equal(receipts(partner), 1, 'one partner call for both growth calls')

      // usage: each growth call is a failover call; the core call is free and is not one
      await gateway.app.meter.flush()
      const rows = await gateway.app.usageStore.queryUsage({ fromDay: '2000-01-01' })
      const of = (key: ApiKey) => rows.filter((row) => row.keyId === key.id && row.method === receipt.method)
      assert.deepEqual(
        [growth, growthToo, core].map((key) =>
          of(key).reduce(
            (sum, row) => ({
              calls: sum.calls + row.calls,
              failoverCalls: sum.failoverCalls + row.failoverCalls,
              credits: sum.credits + row.credits,
            }),
            { calls: 0, failoverCalls: 0, credits: 0 },
          ),
        ),
        [
          { calls: 1, failoverCalls: 1, credits: 80 },
          { calls: 1, failoverCalls: 1, credits: 80 },
          { calls: 1, failoverCalls: 0, credits: 0 },
        ],
      )
    } finally {
      await primary.revive()
    }
  })

  it("a partner's answer is not kept: a core key asking next does not get it from the cache", async () => {
    await primary.kill()
    try {
      const receipt = rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 2)
      const refused = await postJson(`${gateway.url}/v3/${core.key}`, receipt)
      assert.equal(refused.status, 503)
      // and a key that may fail over gets it from the partner again, not from the cache
      const partnerCalls = partner.requests.length
      const served = await postJson(`${gateway.url}/v3/${growth.key}`, receipt, {
        'content-type': 'application/json',
        'enable-failover': 'true',
      })
      assert.equal(served.headers.get('x-served-by'), 'partner')
      assert.equal(partner.requests.length, partnerCalls + 1)
    } finally {
      await primary.revive()
    }
  })
})
