import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const adminToken = 'account-instances-admin-token'

type UsageRow = {
  day: string
  key: string
  keyName: string
  network: string
  method: string
  calls: number
  credits: number
}

/**
 * Two gateways on one PostgreSQL schema, in front of one anvil: an account's usage, read through
 * either one's account API, is the same figures, and they are the calls made through both.
 */
describe('account API across two gateways on one Postgres schema', () => {
  let node: TestNode
  let schema: TestSchema
  const gateways: TestGateway[] = []
  const keys: Record<string, string> = {}
  const tokens: Record<string, string> = {}

  const admin = async (gateway: TestGateway, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    assert.ok(response.status < 300, `${method} ${path}: ${response.status}`)
    return (await response.json()) as Record<string, unknown>
  }
  const account = async (gateway: TestGateway, path: string, token: string) => {
    const response = await fetch(`${gateway.url}/account/api${path}`, {
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(response.status, 200)
    return (await response.json()) as Record<string, unknown>
  }
  const call = async (gateway: TestGateway, key: string, method: string, times: number) => {
    for (let i = 0; i < times; i++) {
      const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody(method))
      assert.equal(answer.status, 200, answer.text)
    }
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    // one after the other: the first migrates, both then share the schema
    for (let i = 0; i < 2; i++) {
      gateways.push(
        await startTestGateway({
          upstreams: [node.url],
          config: { admin: { token: adminToken }, storage: { postgres: schema.url } },
        }),
      )
    }
    const [first, second] = gateways as [TestGateway, TestGateway]
    // made through one instance, tokens made through the other: both read the same tables
    for (const [name, body] of [
      ['web', { account: 'acme', plan: 'team', name: 'web' }],
      ['backend', { account: 'acme', name: 'backend' }],
      ['app', { account: 'globex', plan: 'team', name: 'app' }],
    ] as const) {
      keys[name] = (await admin(first, 'POST', '/keys', body)).key as string
    }
    for (const name of ['acme', 'globex'])
      tokens[name] = (await admin(second, 'POST', `/accounts/${name}/token`)).token as string
    await Promise.all(gateways.map((gateway) => gateway.app.keys.refresh()))

    await call(first, keys.web as string, 'eth_chainId', 3)
    await call(second, keys.web as string, 'eth_chainId', 4)
    await call(second, keys.backend as string, 'eth_blockNumber', 2)
    await call(first, keys.app as string, 'eth_chainId', 1)
    await call(second, keys.app as string, 'eth_chainId', 2)
    // each instance writes what it counted (a reader writes its own pending usage before it reads,
    // but not the other instance's: that comes with the other's next flush, here made now)
    await Promise.all(gateways.map((gateway) => gateway.app.meter.flush()))
  })
  after(async () => {
    for (const gateway of gateways) await gateway.close()
    await schema?.drop()
    await node?.stop()
  })

  it("either instance answers the same usage, the sum of both instances' calls, for each account alone", async () => {
    const [first, second] = gateways as [TestGateway, TestGateway]
    const expected = {
      acme: { 'web eth_chainId': 7, 'backend eth_blockNumber': 2 },
      globex: { 'app eth_chainId': 3 },
    }
    for (const name of ['acme', 'globex'] as const) {
      const [one, two] = await Promise.all(
        [first, second].map((gateway) => account(gateway, '/usage?days=1', tokens[name] as string)),
      )
      assert.deepEqual(two, one)
      const rows = (one as { usage: UsageRow[] }).usage
      assert.deepEqual(
        Object.fromEntries(rows.map((row) => [`${row.keyName} ${row.method}`, row.calls])),
        expected[name],
      )
      // and as the operator reads them
      const operator = (await (
        await fetch(`${second.url}/admin/usage?days=1`, {
          headers: { authorization: `Bearer ${adminToken}` },
        })
      ).json()) as UsageRow[]
      const strip = ({ day, key, network, method, calls, credits }: UsageRow) => ({
        day,
        key,
        network,
        method,
        calls,
        credits,
      })
      const order = (a: { key: string; method: string }, b: { key: string; method: string }) =>
        `${a.key}${a.method}`.localeCompare(`${b.key}${b.method}`)
      assert.deepEqual(
        rows.map(strip).sort(order),
        operator
          .filter((row) => rows.some((mine) => mine.key === row.key))
          .map(strip)
          .sort(order),
      )
    }
  })

  it("today's credits agree on both instances and are the usage's sum", async () => {
    const [first, second] = gateways as [TestGateway, TestGateway]
    for (const name of ['acme', 'globex']) {
      const token = tokens[name] as string
      const [one, two] = await Promise.all(
        [first, second].map((gateway) => account(gateway, '/account', token)),
      )
      assert.deepEqual(two, one)
      const usage = ((await account(first, '/usage?days=1', token)) as { usage: UsageRow[] }).usage
      assert.equal(
        one?.creditsUsedToday,
        usage.reduce((sum, row) => sum + row.credits, 0),
      )
      assert.ok((one?.creditsUsedToday as number) > 0)
    }
  })

  it('a token replaced through one instance is refused by the other at once', async () => {
    const [first, second] = gateways as [TestGateway, TestGateway]
    const before = tokens.globex as string
    const after = (await admin(first, 'POST', '/accounts/globex/token')).token as string
    const refused = await fetch(`${second.url}/account/api/keys`, {
      headers: { authorization: `Bearer ${before}` },
    })
    assert.equal(refused.status, 401)
    assert.deepEqual(
      ((await account(second, '/keys', after)).keys as { name: string }[]).map((key) => key.name),
      ['app'],
    )
  })
})
