import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import type { AccountUsageRow as UsageRow } from '../src/accounts/getAccountUsage.ts'
import { loadConfig } from '../src/config/loadConfig.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const adminToken = 'account-api-admin-token'
/** Low, so the wrong-token test is short; it runs last, as it locks this test's address out. */
const failureBurst = 3

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`account API on ${backend}`, () => {
    let node: TestNode
    let gateway: TestGateway
    let schema: TestSchema | undefined
    const keys: Record<string, string> = {}
    const tokens: Record<string, string> = {}

    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${gateway.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, json: (await response.json()) as Record<string, unknown> }
    }
    const account = async (path: string, token: string | undefined, method = 'GET') => {
      const response = await fetch(`${gateway.url}/account/api${path}`, {
        method,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      })
      return {
        status: response.status,
        headers: response.headers,
        json: (await response.json()) as Record<string, unknown>,
      }
    }
    const call = async (key: string, method: string, times: number) => {
      for (let i = 0; i < times; i++) {
        const answer = await postJson(
          `${gateway.url}/v3/${key}`,
          rpcBody(
            method,
            method === 'eth_getBalance' ? ['0x0000000000000000000000000000000000000001', 'latest'] : [],
          ),
        )
        assert.equal(answer.status, 200, answer.text)
      }
    }

    before(async () => {
      node = await startTestNode({ loadBlocks: 1 })
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      gateway = await startTestGateway({
        upstreams: [node.url],
        config: {
          admin: { token: adminToken },
          auth: { failureBurst },
          ...(schema ? { storage: { postgres: schema.url } } : {}),
        },
      })
      for (const [name, body] of [
        ['web', { account: 'acme', plan: 'developer', name: 'web' }],
        ['backend', { account: 'acme', name: 'backend' }],
        ['app', { account: 'globex', plan: 'core', name: 'app' }],
      ] as const) {
        const created = await admin('POST', '/keys', body)
        assert.equal(created.status, 201)
        keys[name] = created.json.key as string
      }
      for (const name of ['acme', 'globex']) {
        const made = await admin('POST', `/accounts/${name}/token`)
        assert.equal(made.status, 201)
        assert.deepEqual(Object.keys(made.json), ['token'])
        tokens[name] = made.json.token as string
      }
      await gateway.app.keys.refresh()
      await call(keys.web as string, 'eth_chainId', 3)
      await call(keys.web as string, 'eth_blockNumber', 1)
      await call(keys.backend as string, 'eth_getBalance', 2)
      await call(keys.app as string, 'eth_chainId', 5)
    })
    after(async () => {
      await gateway?.close()
      await schema?.drop()
      await node?.stop()
    })

    it("usage: each account's keys' calls and credits by day, key, network and method, as the operator's usage says", async () => {
      const operator = (await (
        await fetch(`${gateway.url}/admin/usage?days=1`, {
          headers: { authorization: `Bearer ${adminToken}` },
        })
      ).json()) as {
        day: string
        key: string
        network: string
        method: string
        calls: number
        credits: number
      }[]
      for (const [name, mine] of [
        ['acme', ['web', 'backend']],
        ['globex', ['app']],
      ] as const) {
        const answer = await account('/usage?days=1', tokens[name])
        assert.equal(answer.status, 200)
        assert.equal(answer.json.account, name)
        assert.equal(answer.json.days, 1)
        const rows = answer.json.usage as UsageRow[]
        const expected = operator
          .filter((row) => mine.some((key) => keys[key] === row.key))
          .map(({ day, key, network, method, calls, credits }) => ({
            day,
            key,
            network,
            method,
            calls,
            credits,
          }))
        const seen = rows.map(({ day, key, network, method, calls, credits }) => ({
          day,
          key,
          network,
          method,
          calls,
          credits,
        }))
        const order = (a: { key: string; method: string }, b: { key: string; method: string }) =>
          `${a.key}${a.method}`.localeCompare(`${b.key}${b.method}`)
        assert.deepEqual(seen.sort(order), expected.sort(order))
        assert.ok(rows.every((row) => row.keyName === mine.find((key) => keys[key] === row.key)))
      }
      const acme = (await account('/usage', tokens.acme)).json.usage as UsageRow[]
      const calls = Object.fromEntries(acme.map((row) => [`${row.keyName} ${row.method}`, row.calls]))
      assert.deepEqual(calls, { 'web eth_chainId': 3, 'web eth_blockNumber': 1, 'backend eth_getBalance': 2 })
      assert.ok(acme.every((row) => row.network === 'devnet' && row.credits > 0))
      const globex = (await account('/usage', tokens.globex)).json.usage as UsageRow[]
      assert.deepEqual(
        globex.map((row) => [row.keyName, row.method, row.calls]),
        [['app', 'eth_chainId', 5]],
      )
    })

    it("keys: the account's own keys by name with plan, limits and allowlists; never a secret", async () => {
      await admin('POST', `/keys/${keys.backend}/rotate-secret`)
      const answer = await account('/keys', tokens.acme)
      assert.equal(answer.status, 200)
      const listed = answer.json.keys as {
        key: string
        name: string
        plan: string
        hasSecret: boolean
        allowlists: unknown
      }[]
      assert.deepEqual(
        listed.map((key) => [key.name, key.key, key.plan]),
        [
          ['web', keys.web, 'developer'],
          ['backend', keys.backend, 'developer'],
        ],
      )
      assert.equal(listed[1]?.hasSecret, true)
      assert.deepEqual(listed[0]?.allowlists, { contracts: [], userAgents: [], origins: [], methods: [] })
      assert.doesNotMatch(JSON.stringify(answer.json), /hmac-sha256|secretHash|"secret"/)
      const globex = await account('/keys', tokens.globex)
      assert.deepEqual(
        (globex.json.keys as { name: string }[]).map((key) => key.name),
        ['app'],
      )
    })

    it("account: the plan's numbers and today's credits, which are the usage's sum", async () => {
      const answer = await account('/account', tokens.acme)
      assert.equal(answer.status, 200)
      const usage = (await account('/usage?days=1', tokens.acme)).json.usage as UsageRow[]
      assert.deepEqual(
        { ...answer.json, resetsAt: undefined },
        {
          account: 'acme',
          plan: 'developer',
          dailyCredits: 15_000_000,
          creditsPerSecond: 4_000,
          creditsUsedToday: usage.reduce((sum, row) => sum + row.credits, 0),
          resetsAt: undefined,
        },
      )
    })

    it('the admin API lists and shows accounts; a name it does not know is 404', async () => {
      const list = await fetch(`${gateway.url}/admin/accounts`, {
        headers: { authorization: `Bearer ${adminToken}` },
      })
      const accounts = (await list.json()) as { name: string; token: unknown }[]
      assert.deepEqual(
        accounts.filter((a) => a.name !== 'acme' && a.name !== 'globex').every((a) => a.token === null),
        true,
      )
      assert.ok(accounts.find((a) => a.name === 'acme')?.token)
      const shown = await admin('GET', '/accounts/globex')
      assert.equal(shown.status, 200)
      assert.deepEqual(
        (shown.json.keys as { key: string }[]).map((key) => key.key),
        [keys.app],
      )
      assert.deepEqual(await admin('GET', '/accounts/nobody'), {
        status: 404,
        json: { error: { message: 'no account with that name' } },
      })
      assert.equal((await admin('POST', '/accounts/nobody/token')).status, 404)
    })

    it('refuses other routes and methods; a bad days is 400', async () => {
      assert.equal((await account('/nothing', tokens.acme)).status, 404)
      assert.equal((await account('/usage', tokens.acme, 'DELETE')).status, 405)
      assert.deepEqual(
        await account('/usage?days=0', tokens.acme).then(({ status, json }) => ({ status, json })),
        {
          status: 400,
          json: { error: { message: 'days: expected a whole number from 1 to 3650' } },
        },
      )
    })

    it('401 for a missing, a replaced and a revoked token; then, past the burst of wrong ones, 429 even for the right one', async () => {
      const refused = { error: { message: 'account token required: Authorization: Bearer <account token>' } }
      const missing = await account('/usage', undefined)
      assert.equal(missing.status, 401)
      assert.deepEqual(missing.json, refused)
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="account"')

      const replaced = tokens.globex as string
      const made = await admin('POST', '/accounts/globex/token')
      assert.deepEqual(await account('/keys', replaced).then(({ status, json }) => ({ status, json })), {
        status: 401,
        json: refused,
      })
      assert.equal((await account('/keys', made.json.token as string)).status, 200)
      assert.deepEqual((await admin('DELETE', '/accounts/globex/token')).json, {
        account: 'globex',
        revoked: true,
      })
      assert.equal((await account('/keys', made.json.token as string)).status, 401)
      // three wrong tokens so far (replaced, revoked and this one): the burst is spent
      assert.equal((await account('/keys', `tga_${'0'.repeat(32)}`)).status, 401)
      const locked = await account('/keys', tokens.acme)
      assert.equal(locked.status, 429)
      assert.ok(Number(locked.headers.get('retry-after')) >= 1)
    })

    it('a reload that changes auth numbers starts the count of wrong tokens again, as for key secrets', async () => {
      assert.equal((await account('/keys', tokens.acme)).status, 429)
      const config = parse(readFileSync(gateway.configFile, 'utf8')) as Record<string, unknown>
      writeFileSync(gateway.configFile, stringify({ ...config, auth: { failureBurst: failureBurst + 1 } }))
      await gateway.app.reloader.reload(loadConfig(gateway.configFile))
      assert.equal((await account('/keys', tokens.acme)).status, 200)
    })
  })
}
