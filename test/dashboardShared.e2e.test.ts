import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

const token = 'dashboard-shared-token-0123456789'

type Overview = {
  shared: boolean
  instance: string
  statuses: Record<string, number>
  networks: {
    name: string
    creditsPerMinute: number[]
    statuses: Record<string, number>
    cache: { hits: number; misses: number } | null
  }[]
}

/**
 * Two gateways on one PostgreSQL schema and one Redis (the test's own key prefix): the overview's
 * figures are every instance's, so both dashboards show the same numbers (docs/operations.md,
 * Dashboard).
 */
describe('dashboard with two instances on one Redis', () => {
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  const gateways: TestGateway[] = []

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    for (let i = 0; i < 2; i++)
      gateways.push(
        await startTestGateway({
          upstreams: [node.url],
          config: {
            storage: { postgres: schema.url },
            redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
            admin: { token },
            metering: { flushMs: 100 },
          },
        }),
      )
  })
  after(async () => {
    for (const gateway of gateways) await gateway.close()
    await node?.stop()
    await schema?.drop()
    await prefix?.remove()
  })

  async function overviewOf(gateway: TestGateway): Promise<Overview> {
    const signIn = await fetch(`${gateway.url}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gateway.url },
      body: JSON.stringify({ token }),
    })
    assert.equal(signIn.status, 200)
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const answer = await fetch(`${gateway.url}/dashboard/api/overview`, { headers: { cookie } })
    assert.equal(answer.status, 200)
    return (await answer.json()) as Overview
  }

  /** What both dashboards must agree on (the per-minute series summed: a read may fall in the next minute). */
  const figuresOf = (overview: Overview) => {
    const [devnet] = overview.networks
    assert.ok(devnet)
    return {
      shared: overview.shared,
      statuses: overview.statuses,
      devnetStatuses: devnet.statuses,
      credits: devnet.creditsPerMinute.reduce((sum, credits) => sum + credits, 0),
      cache: devnet.cache && { hits: devnet.cache.hits, misses: devnet.cache.misses },
    }
  }

  it("calls through the first show in the second's overview, the same numbers in both", async () => {
    const [first, second] = gateways
    assert.ok(first && second)
    for (let i = 0; i < 5; i++) {
      const answer = await postJson(first.endpoint, rpcBody('eth_getBlockByNumber', ['0x1', false]))
      assert.equal(answer.status, 200)
    }
    const refused = await postJson(`${first.url}/v3/0123456789abcdef0123456789abcdef`, rpcBody('eth_chainId'))
    assert.equal(refused.status, 401)

    // the ledger's credits for those calls, as GET /admin/usage shows them
    await first.app.meter.flush()
    const usage = await fetch(`${second.url}/admin/usage?hours=1`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const rows = (await usage.json()) as { network: string; calls: number; credits: number }[]
    const ledgerCredits = rows.reduce((sum, row) => sum + row.credits, 0)
    assert.equal(
      rows.reduce((sum, row) => sum + row.calls, 0),
      5,
    )
    assert.ok(ledgerCredits > 0)
    const cacheStats = first.app.networks.all[0]?.cache?.stats
    assert.ok(cacheStats && cacheStats.hits > 0)

    const expected = {
      shared: true,
      statuses: { 200: 5, 401: 1 },
      devnetStatuses: { 200: 5, 401: 1 },
      credits: ledgerCredits,
      // the second made no lookups: every instance's are the first's
      cache: { hits: cacheStats.hits, misses: cacheStats.misses },
    }
    await until(async () => {
      const figures = figuresOf(await overviewOf(second))
      return JSON.stringify(figures) === JSON.stringify(expected)
    }, "the second gateway's overview to show the first's calls")
    assert.deepEqual(figuresOf(await overviewOf(second)), expected)
    assert.deepEqual(figuresOf(await overviewOf(first)), expected)
  })
})
