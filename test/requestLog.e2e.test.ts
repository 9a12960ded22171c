import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createStores } from '../src/app/createStores.ts'
import type { Config } from '../src/config/configSchema.ts'
import type { RequestView } from '../src/requestLog/readRequestLog.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const adminToken = 'request-log-e2e-admin-token'
type Page = { account: string; requests: RequestView[]; next: string | null }

/**
 * The request log through a real gateway in front of anvil (behind a fake that fails eth_getBalance
 * with HTTP 500 and answers eth_call with a revert): on SQLite, one gateway logging every successful
 * call; on PostgreSQL, that gateway and a second one on the same schema logging none (sample rate 0),
 * both writing one log. Errors and refusals are all logged, on both.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`request log on ${backend}`, () => {
    let node: TestNode
    let fake: FakeUpstream
    let schema: TestSchema | undefined
    let dir: string
    let storage: Config['storage']
    const gateways: TestGateway[] = []
    const keys: Record<string, string> = {}
    const tokens: Record<string, string> = {}
    /** The statuses of the answers the limited key got. */
    const limitedStatuses: number[] = []

    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${gateways[0]?.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      assert.ok(response.status < 300, `${method} ${path}: ${response.status}`)
      return (await response.json()) as Record<string, unknown>
    }
    const read = async (path: string, token: string, gateway = gateways[0] as TestGateway) => {
      const get = () =>
        fetch(`${gateway.url}/account/api${path}`, { headers: { authorization: `Bearer ${token}` } })
      let response = await get()
      // the account API's rate (20 a second): a fast run reads faster; waited out as the portal does
      while (response.status === 429) {
        await response.body?.cancel()
        await delay(Number(response.headers.get('retry-after')) * 1000)
        response = await get()
      }
      assert.equal(response.status, 200, await response.clone().text())
      return response
    }
    const page = async (query: string, token = tokens.acme as string, gateway?: TestGateway) =>
      (await (await read(`/requests?limit=1000${query}`, token, gateway)).json()) as Page
    const rpc = (gateway: TestGateway, key: string, body: unknown, headers: Record<string, string> = {}) =>
      postJson(`${gateway.url}/v3/${key}`, body, { 'content-type': 'application/json', ...headers })

    before(async () => {
      node = await startTestNode({ loadBlocks: 1 })
      fake = await startFakeUpstream({
        kind: 'refuseOr',
        target: node.url,
        refuse: ({ method }) =>
          method === 'eth_getBalance'
            ? { status: 500, error: { code: -32603, message: 'upstream down' } }
            : method === 'eth_call'
              ? { error: { code: 3, message: 'execution reverted' } }
              : undefined,
      })
      dir = mkdtempSync(join(tmpdir(), 'tollgate-request-log-'))
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      storage = schema ? { postgres: schema.url } : { sqlite: join(dir, 'tollgate.db') }
      const rates = backend === 'postgres' ? [1, 0] : [1]
      for (const sampleRate of rates) {
        gateways.push(
          await startTestGateway({
            config: {
              admin: { token: adminToken },
              storage,
              networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ name: 'alpha', url: fake.url }] }],
              requestLog: { sampleRate, rowsPerAccount: 1000 },
            },
          }),
        )
      }
      for (const [name, body] of [
        ['web', { account: 'acme', plan: 'team', name: 'web' }],
        ['locked', { account: 'acme', name: 'locked' }],
        ['limited', { account: 'acme', name: 'limited' }],
        ['secret', { account: 'acme', name: 'secret', secret: true }],
        ['app', { account: 'globex', plan: 'team', name: 'app' }],
      ] as const) {
        keys[name] = (await admin('POST', '/keys', body)).key as string
      }
      await admin('POST', `/keys/${keys.locked}/allowlists/methods`, { entries: ['eth_chainId'] })
      await admin('PATCH', `/keys/${keys.limited}`, { creditsPerSecond: 1 })
      await admin('PATCH', `/keys/${keys.secret}`, { requireSecret: true })
      for (const name of ['acme', 'globex'])
        tokens[name] = (await admin('POST', `/accounts/${name}/token`)).token as string
      await Promise.all(gateways.map((gateway) => gateway.app.keys.refresh()))

      const [first, second = first] = gateways as [TestGateway, TestGateway?]
      const web = keys.web as string
      for (let i = 0; i < 3; i++) assert.equal((await rpc(first, web, rpcBody('eth_chainId'))).status, 200)
      // the second instance logs no successful call (rate 0), but every failure
      for (let i = 0; i < 2; i++) assert.equal((await rpc(second, web, rpcBody('eth_chainId'))).status, 200)
      const notOurs = await rpc(second, web, rpcBody('eth_nope'))
      assert.equal((notOurs.json as { error: { code: number } }).error.code, -32601)
      const reverted = await rpc(
        first,
        web,
        rpcBody('eth_call', [{ to: `0x${'11'.repeat(20)}`, data: '0x' }]),
      )
      assert.equal((reverted.json as { error: { code: number } }).error.code, 3)
      const failed = await rpc(first, web, rpcBody('eth_getBalance', [`0x${'22'.repeat(20)}`, 'latest']))
      assert.ok(failed.status >= 500, failed.text)
      const batch = await rpc(first, web, [rpcBody('eth_chainId', [], 1), rpcBody('eth_nope', [], 2)])
      assert.equal(batch.status, 200)
      assert.equal((await rpc(first, keys.locked as string, rpcBody('eth_blockNumber'))).status, 403)
      assert.equal((await rpc(first, keys.secret as string, rpcBody('eth_chainId'))).status, 401)
      // a key nobody holds: no account, nothing logged
      assert.equal((await rpc(first, 'f'.repeat(32), rpcBody('eth_chainId'))).status, 401)
      for (let i = 0; i < 4; i++)
        limitedStatuses.push((await rpc(second, keys.limited as string, rpcBody('eth_chainId'))).status)
      assert.ok(limitedStatuses.includes(429), String(limitedStatuses))
      assert.equal((await rpc(first, keys.app as string, rpcBody('eth_chainId'))).status, 200)
      // over WebSocket: one answered call, one error
      const ws = await openSocket(`${first.url.replace('http', 'ws')}/ws/v3/${web}`)
      ws.socket.send(JSON.stringify(rpcBody('eth_chainId', [], 1)))
      ws.socket.send(JSON.stringify(rpcBody('eth_nope', [], 2)))
      await until(() => ws.messages.length === 2, 'both WebSocket answers')
      ws.socket.close()
      await ws.closed
      // each instance writes its own rows (a reader writes its own before it reads)
      await Promise.all(gateways.map((gateway) => gateway.app.requestLog?.flush()))
    })
    after(async () => {
      for (const gateway of gateways) await gateway.close()
      await schema?.drop()
      await fake?.close()
      await node?.stop()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it('every error and refusal of a key is logged, with its reason; successful calls as sampled', async () => {
      const { requests } = await page('')
      const count = (keyName: string, method: string, outcome: string) =>
        requests.filter((row) => row.keyName === keyName && row.method === method && row.outcome === outcome)
          .length
      // 3 over HTTP, 1 in the batch, 1 over WebSocket on the first instance; 2 more on the second,
      // which on PostgreSQL logs none of them (rate 0) and on SQLite is the first
      assert.equal(count('web', 'eth_chainId', 'ok'), backend === 'postgres' ? 5 : 7)
      // the second instance's HTTP call, the batch's, the WebSocket's
      assert.equal(count('web', '(invalid)', 'error'), 3)
      const revert = requests.find((row) => row.method === 'eth_call')
      assert.deepEqual(
        [revert?.outcome, revert?.code, revert?.error, revert?.reason, revert?.upstream],
        ['error', 3, 'NodeError', 'execution reverted', 'alpha'],
      )
      const failure = requests.find((row) => row.method === 'eth_getBalance')
      assert.equal(failure?.outcome, 'error')
      assert.ok((failure?.status ?? 0) >= 500)
      assert.equal(failure?.upstream, 'alpha')
      assert.equal(count('locked', 'eth_blockNumber', 'refused'), 1)
      const unauthorized = requests.filter((row) => row.keyName === 'secret')
      assert.deepEqual(
        unauthorized.map((row) => [row.method, row.status, row.outcome]),
        [['(request)', 401, 'refused']],
      )
      const refused429 = requests.filter((row) => row.keyName === 'limited' && row.status === 429)
      assert.equal(refused429.length, limitedStatuses.filter((status) => status === 429).length)
      assert.ok(refused429.every((row) => row.outcome === 'refused' && row.error === 'RateLimitError'))
      // the stranger's key is in nobody's log; the client address is cut to its /24
      assert.ok(requests.every((row) => row.key !== 'f'.repeat(32)))
      assert.ok(requests.every((row) => row.clientAddress === '127.0.0.0/24'))
      assert.ok(requests.every((row) => row.params === undefined && row.answer === undefined))
    })

    it('both instances answer the same log; filters, paging and the summary agree with it', async () => {
      const all = await page('')
      if (gateways[1]) assert.deepEqual(await page('', tokens.acme, gateways[1]), all)
      const times = all.requests.map((row) => row.time)
      assert.deepEqual(times, [...times].sort().reverse())
      const errors = await page('&outcome=error')
      assert.ok(errors.requests.length > 0 && errors.requests.every((row) => row.outcome === 'error'))
      assert.equal((await page('&key=locked')).requests.length, 1)
      assert.equal((await page(`&key=${keys.locked}`)).requests.length, 1)
      assert.equal((await page('&method=eth_call')).requests.length, 1)
      assert.equal((await page('&network=devnet')).requests.length, all.requests.length)
      assert.equal((await page('&network=elsewhere')).requests.length, 0)
      assert.equal((await page(`&from=${new Date(Date.now() + 60_000).toISOString()}`)).requests.length, 0)
      assert.equal(
        (await page(`&to=${new Date(Date.now() + 60_000).toISOString()}`)).requests.length,
        all.requests.length,
      )
      // pages of 4, newest first, following `next`
      const paged: RequestView[] = []
      let before: string | null = ''
      while (before !== null) {
        const query: string = before === '' ? '' : `&before=${before}`
        const next = (await (await read(`/requests?limit=4${query}`, tokens.acme as string)).json()) as Page
        paged.push(...next.requests)
        before = next.next
      }
      assert.deepEqual(paged, all.requests)
      const summary = (await (await read('/requests/summary?days=1', tokens.acme as string)).json()) as {
        errors: number
        refused: number
        failures: { status: number; calls: number }[]
        latency: { sampledCalls: number; p50Ms: number | null; p99Ms: number | null }
      }
      assert.equal(summary.errors, all.requests.filter((row) => row.outcome === 'error').length)
      assert.equal(summary.refused, all.requests.filter((row) => row.outcome === 'refused').length)
      assert.equal(summary.latency.sampledCalls, all.requests.filter((row) => row.outcome === 'ok').length)
      assert.ok(summary.latency.p50Ms !== null && summary.latency.p99Ms !== null)
      assert.ok(summary.latency.p50Ms <= summary.latency.p99Ms)
    })

    it('NDJSON exports the same rows; no upstream URL appears anywhere', async () => {
      const all = await page('')
      const response = await read('/requests?format=ndjson', tokens.acme as string)
      assert.equal(response.headers.get('content-type'), 'application/x-ndjson')
      const text = await response.text()
      const lines = text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as RequestView)
      assert.deepEqual(lines, all.requests)
      const operator = await fetch(`${gateways[0]?.url}/admin/requests?format=ndjson`, {
        headers: { authorization: `Bearer ${adminToken}` },
      })
      const everything = await operator.text()
      for (const url of [fake.url, node.url, new URL(fake.url).host, new URL(node.url).host]) {
        assert.ok(!text.includes(url), url)
        assert.ok(!everything.includes(url), url)
      }
    })

    it("another account's token sees none of it; the operator sees each account's and all", async () => {
      const globex = await page('', tokens.globex)
      assert.deepEqual(
        globex.requests.map((row) => [row.keyName, row.method, row.outcome]),
        [['app', 'eth_chainId', 'ok']],
      )
      assert.equal((await page(`&key=${keys.web}`, tokens.globex)).requests.length, 0)
      const acme = await page('')
      assert.ok(acme.requests.every((row) => row.account === 'acme'))
      const adminRead = async (query: string) =>
        (await (
          await fetch(`${gateways[0]?.url}/admin/requests?limit=1000${query}`, {
            headers: { authorization: `Bearer ${adminToken}` },
          })
        ).json()) as Page
      assert.deepEqual((await adminRead('&account=acme')).requests, acme.requests)
      assert.equal((await adminRead('')).requests.length, acme.requests.length + globex.requests.length)
    })

    it('a prune keeps each account to its bound, the newest rows', async () => {
      const before = (await page('')).requests
      const stores = await createStores(storage, { exclusive: false })
      try {
        await stores.requestLog.prune(Date.now() - 86_400_000, 3)
        // again, as another instance would: nothing more to delete
        assert.equal(await stores.requestLog.prune(Date.now() - 86_400_000, 3), 0)
      } finally {
        await stores.close()
      }
      assert.deepEqual((await page('')).requests, before.slice(0, 3))
      assert.equal((await page('', tokens.globex)).requests.length, 1)
    })
  })
}
