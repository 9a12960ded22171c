import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const token = 'test-admin-token-0123456789'
const run = promisify(execFile)

describe('admin API and usage reports', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url], config: { admin: { token } } })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const admin = async (method: string, path: string, body?: unknown, auth = `Bearer ${token}`) => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> & unknown[] }
  }

  it('refuses a missing or wrong token', async () => {
    assert.equal((await admin('GET', '/keys', undefined, '')).status, 401)
    assert.equal((await admin('GET', '/keys', undefined, 'Bearer nope')).status, 401)
  })

  it('refuses query numbers out of range or not whole with 400 naming the bound; body numbers too', async () => {
    for (const query of ['days=99999999999', 'days=0', 'days=1.5', 'days=-3', 'days=', 'days=abc']) {
      assert.deepEqual(await admin('GET', `/usage?${query}`), {
        status: 400,
        json: { error: { message: 'days: expected a whole number from 1 to 3650' } },
      })
    }
    for (const query of ['hours=99999999999', 'hours=8761', 'hours=1e2']) {
      assert.deepEqual(await admin('GET', `/usage?${query}`), {
        status: 400,
        json: { error: { message: 'hours: expected a whole number from 1 to 8760' } },
      })
    }
    assert.equal((await admin('GET', '/usage?days=3650')).status, 200)
    assert.equal((await admin('GET', '/usage?hours=8760')).status, 200)
    assert.deepEqual(
      await admin('POST', '/keys', { plan: 'custom', dailyCredits: 1e300, creditsPerSecond: 1 }),
      {
        status: 400,
        json: { error: { message: 'dailyCredits: Too big: expected int to be <=9007199254740991' } },
      },
    )
    const limits = await admin('PATCH', '/keys/0123456789abcdef0123456789abcdef', { creditsPerSecond: 2.5 })
    assert.deepEqual(limits, {
      status: 400,
      json: { error: { message: 'creditsPerSecond: Invalid input: expected int, received number' } },
    })
  })

  it('creates and manages keys; usage by method and day matches what was spent, in the API and the CLI', async () => {
    const created = await admin('POST', '/keys', { plan: 'team', name: 'app', secret: true })
    assert.equal(created.status, 201)
    const key = created.json.key as string
    assert.match(key, /^[0-9a-f]{32}$/)
    assert.match(created.json.secret as unknown as string, /^[0-9a-f]{32}$/)
    assert.equal(created.json.plan, 'team')
    assert.equal(created.json.hasSecret, true)
    assert.equal((await admin('POST', '/keys', { plan: 'platinum' })).status, 400)
    await gateway.app.keys.refresh()

    const endpoint = `${gateway.url}/v3/${key}`
    for (let id = 0; id < 3; id++)
      assert.equal((await postJson(endpoint, rpcBody('eth_blockNumber', [], id))).status, 200)
    for (let id = 0; id < 2; id++)
      assert.equal((await postJson(endpoint, rpcBody('eth_chainId', [], id))).status, 200)
    await postJson(endpoint, rpcBody('eth_getBlockByNumber', ['0x01', false]))
    await postJson(endpoint, [rpcBody('eth_chainId', [], 1), rpcBody('eth_nope', [], 2)])

    const today = new Date().toISOString().slice(0, 10)
    const expected = [
      { day: today, network: 'devnet', method: '(batch)', calls: 1, credits: 80, failoverCalls: 0, key },
      { day: today, network: 'devnet', method: '(invalid)', calls: 1, credits: 5, failoverCalls: 0, key },
      {
        day: today,
        network: 'devnet',
        method: 'eth_blockNumber',
        calls: 3,
        credits: 240,
        failoverCalls: 0,
        key,
      },
      { day: today, network: 'devnet', method: 'eth_chainId', calls: 3, credits: 15, failoverCalls: 0, key },
      {
        day: today,
        network: 'devnet',
        method: 'eth_getBlockByNumber',
        calls: 1,
        credits: 5,
        failoverCalls: 0,
        key,
      },
    ]
    const usage = await admin('GET', `/usage?key=${key}&days=1`)
    assert.equal(usage.status, 200)
    assert.deepEqual(usage.json, expected)
    // the same calls per hour: each row names its hour, and the hours add up to the day
    const hourly = (await admin('GET', `/usage?key=${key}&hours=48`)).json as unknown as Record<
      string,
      unknown
    >[]
    for (const row of hourly) assert.match(row.hour as string, /^\d{4}-\d{2}-\d{2}T\d{2}$/)
    const byMethod = new Map<string, { calls: number; credits: number }>()
    for (const row of hourly) {
      const sum = byMethod.get(row.method as string) ?? { calls: 0, credits: 0 }
      byMethod.set(row.method as string, {
        calls: sum.calls + (row.calls as number),
        credits: sum.credits + (row.credits as number),
      })
    }
    assert.deepEqual(
      [...byMethod].sort(([a], [b]) => (a < b ? -1 : 1)).map(([method, sum]) => ({ method, ...sum })),
      expected.map(({ method, calls, credits }) => ({ method, calls, credits })),
    )

    const { stdout } = await run(process.execPath, [
      resolve('bin/tollgate.js'),
      'usage',
      '--key',
      key,
      '--json',
      '--config',
      gateway.configFile,
    ])
    assert.deepEqual(JSON.parse(stdout), expected)
    const table = (
      await run(process.execPath, [resolve('bin/tollgate.js'), 'usage', '--config', gateway.configFile])
    ).stdout
    assert.match(table, new RegExp(`${today}\\s+${key}\\s+devnet\\s+eth_blockNumber\\s+3\\s+240`))

    const patched = await admin('PATCH', `/keys/${key}`, {
      creditsPerSecond: 1_000,
      requireSecret: true,
      networks: ['devnet'],
    })
    assert.equal(patched.status, 200)
    assert.equal(patched.json.creditsPerSecond, 1_000)
    assert.equal(patched.json.requireSecret, true)
    assert.deepEqual(patched.json.networks, ['devnet'])
    assert.equal((await admin('PATCH', `/keys/${key}`, { dailyCredits: 10 ** 12 })).status, 400)

    const lists = await admin('POST', `/keys/${key}/allowlists/methods`, { entries: ['eth_chainId'] })
    assert.deepEqual(lists.json.methods, ['eth_chainId'])
    const cleared = await admin('DELETE', `/keys/${key}/allowlists/methods`, { entries: ['eth_chainId'] })
    assert.deepEqual(cleared.json.methods, [])

    const rotated = await admin('POST', `/keys/${key}/rotate-secret`)
    assert.match(rotated.json.secret as unknown as string, /^[0-9a-f]{32}$/)

    const plans = await admin('GET', '/plans')
    assert.equal((plans.json.core as unknown as { dailyCredits: number }).dailyCredits, 3_000_000)

    assert.equal((await admin('DELETE', `/keys/${key}`)).status, 200)
    await gateway.app.keys.refresh()
    assert.equal((await postJson(endpoint, rpcBody('eth_chainId'))).status, 401)
    assert.equal((await admin('GET', `/keys/${key}`)).status, 404)
  })

  it('the CLI and the API take the same allowlist kind names and refuse methods the gateway does not offer', async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [resolve('bin/tollgate.js'), ...args, '--config', gateway.configFile])
    const { key } = JSON.parse((await cli('keys', 'create', '--plan', 'team', '--json')).stdout) as {
      key: string
    }
    // two entries per kind: one added through the CLI, one through the API
    const entries = {
      contracts: ['0x00000000000000000000000000000000000000a1', '0x00000000000000000000000000000000000000a2'],
      userAgents: ['CliAgent', 'ApiAgent'],
      origins: ['cli.example.com', 'api.example.com'],
      methods: ['eth_chainId', 'eth_getBalance'],
    } as const
    // each kind's name, and its field name in JSON (accepted as an alias where it differs)
    const kinds = [
      ['contracts', 'contracts'],
      ['user-agents', 'userAgents'],
      ['origins', 'origins'],
      ['methods', 'methods'],
    ] as const
    for (const [name, field] of kinds) {
      const spellings: [string, string][] =
        name === field
          ? [[name, name]]
          : [
              [name, field],
              [field, name],
            ]
      for (const [cliName, apiName] of spellings) {
        const [cliEntry, apiEntry] = entries[field]
        const viaCli = JSON.parse(
          (await cli('keys', 'allowlist', 'add', key, cliName, cliEntry, '--json')).stdout,
        )
        assert.deepEqual(viaCli.allowlists[field], [cliEntry], `CLI ${cliName}`)
        const viaApi = await admin('POST', `/keys/${key}/allowlists/${apiName}`, { entries: [apiEntry] })
        assert.equal(viaApi.status, 200, `API ${apiName}`)
        assert.deepEqual(viaApi.json[field], [cliEntry, apiEntry], `API ${apiName}`)
        await cli('keys', 'allowlist', 'remove', key, cliName, apiEntry)
        const removed = await admin('DELETE', `/keys/${key}/allowlists/${apiName}`, { entries: [cliEntry] })
        assert.deepEqual(removed.json[field], [], `API ${apiName}`)
      }
    }

    const wrongKind = await admin('POST', `/keys/${key}/allowlists/user_agents`, { entries: ['x'] })
    assert.equal(wrongKind.status, 404)
    assert.deepEqual(wrongKind.json, {
      error: {
        message:
          "unknown allowlist kind 'user_agents'; allowlist kinds: contracts, user-agents, origins, methods",
      },
    })
    // a method the route does not have is a 404, whatever its body
    const wrongMethod = await admin('PUT', `/keys/${key}/allowlists/methods`)
    assert.equal(wrongMethod.status, 404)
    await assert.rejects(
      cli('keys', 'allowlist', 'add', key, 'user_agents', 'x'),
      (err: { stderr: string }) => {
        assert.match(err.stderr, /expected one of contracts, user-agents, origins, methods/)
        return true
      },
    )

    const refusedByApi = await admin('POST', `/keys/${key}/allowlists/methods`, {
      entries: ['eth_chainId', 'not_a_method'],
    })
    assert.equal(refusedByApi.status, 400)
    assert.deepEqual(refusedByApi.json, {
      error: { message: "'not_a_method' is not a method tollgate offers" },
    })
    await assert.rejects(
      cli('keys', 'allowlist', 'add', key, 'methods', 'eth_chainId', 'not_a_method'),
      (err: { stderr: string; code: number }) => {
        assert.equal(err.code, 1)
        assert.equal(err.stderr, "'not_a_method' is not a method tollgate offers\n")
        return true
      },
    )
    assert.deepEqual((await admin('GET', `/keys/${key}/allowlists`)).json.methods, [], 'nothing was added')
  })

  it('key and account names: at most 100 characters, no bidi or control characters, in the API and the CLI alike', async () => {
    const keysBefore = ((await admin('GET', '/keys')).json as unknown[]).length
    assert.deepEqual(await admin('POST', '/keys', { name: 'n'.repeat(900 * 1024) }), {
      status: 400,
      json: { error: { message: 'the key name is too long: at most 100 characters, got 921600' } },
    })
    assert.deepEqual(await admin('POST', '/keys', { name: 'invoice\u202Egpj.exe' }), {
      status: 400,
      json: {
        error: {
          message:
            'the key name may not contain U+202E (a bidirectional formatting character), found at character 8',
        },
      },
    })
    assert.deepEqual(await admin('POST', '/keys', { account: 'acme\u0007' }), {
      status: 400,
      json: {
        error: {
          message: 'the account name may not contain U+0007 (a control character), found at character 5',
        },
      },
    })
    await assert.rejects(
      run(process.execPath, [
        resolve('bin/tollgate.js'),
        ...['keys', 'create', '--name', 'pay\u2067ment', '--config', gateway.configFile],
      ]),
      (err: { stderr: string; code: number }) => {
        assert.equal(err.code, 1)
        assert.equal(
          err.stderr,
          'the key name may not contain U+2067 (a bidirectional formatting character), found at character 4\n',
        )
        return true
      },
    )
    assert.equal(((await admin('GET', '/keys')).json as unknown[]).length, keysBefore, 'nothing was made')
    const made = await admin('POST', '/keys', { name: 'Zürich – 東京 🔑'.padEnd(100, '.') })
    assert.equal(made.status, 201)
  })

  it('the CLI: create with a secret, show, set-limits, allowlist, networks, plans', async () => {
    const cli = async (...args: string[]) =>
      (await run(process.execPath, [resolve('bin/tollgate.js'), ...args, '--config', gateway.configFile]))
        .stdout
    const created = JSON.parse(
      await cli('keys', 'create', '--plan', 'growth', '--secret', '--failover', '--json'),
    )
    assert.equal(created.plan, 'growth')
    assert.equal(created.failover, true)
    assert.match(created.secret, /^[0-9a-f]{32}$/)
    const shown = JSON.parse(await cli('keys', 'show', created.key, '--json'))
    assert.equal(shown.secret, undefined, 'the secret is shown once')
    assert.equal(shown.hasSecret, true)
    const limited = JSON.parse(
      await cli('keys', 'set-limits', created.key, '--daily-credits', '1000', '--json'),
    )
    assert.equal(limited.dailyCredits, 1000)
    const lists = JSON.parse(
      await cli('keys', 'allowlist', 'add', created.key, 'user-agents', 'MyWallet', '--json'),
    )
    assert.deepEqual(lists.allowlists.userAgents, ['MyWallet'])
    assert.deepEqual(
      JSON.parse(await cli('keys', 'networks', created.key, '--set', 'devnet', '--json')).networks,
      ['devnet'],
    )
    await assert.rejects(
      cli('keys', 'networks', created.key, '--set', 'polygon'),
      /unknown network\(s\): polygon/,
    )
    assert.match(await cli('plans'), /growth\s+150,000,000\s+40,000\s+unlimited\s+yes/)
  })
})

describe('admin API off', () => {
  it('answers 404 when no admin token is configured', async () => {
    const gateway = await startTestGateway({
      upstreams: ['http://127.0.0.1:9'],
      config: { upstreams: { headPollMs: 60_000 } },
    })
    try {
      const response = await fetch(`${gateway.url}/admin/keys`, {
        headers: { authorization: 'Bearer anything-at-all' },
      })
      assert.equal(response.status, 404)
    } finally {
      await gateway.close()
    }
  })
})

describe('admin API: wrong tokens per client address', () => {
  let offsetMs = 0
  const clock = { now: () => Date.now() + offsetMs }
  let gateway: TestGateway

  before(async () => {
    gateway = await startTestGateway({
      upstreams: ['http://127.0.0.1:9'],
      config: { admin: { token }, upstreams: { headPollMs: 60_000 } },
      clock,
    })
  })
  after(() => gateway?.close())

  const keys = (authorization: string | undefined, path = '/admin/keys') =>
    fetch(`${gateway.url}${path}`, authorization === undefined ? {} : { headers: { authorization } })

  it('10 wrong tokens, then 429 with Retry-After even for the right one, shared with the dashboard sign-in', async () => {
    // no token at all is not a guess: never counted
    for (let i = 0; i < 12; i++) assert.equal((await keys(undefined)).status, 401)
    for (let i = 0; i < 10; i++) assert.equal((await keys(`Bearer wrong-${i}`)).status, 401, `attempt ${i}`)
    const limited = await keys(`Bearer ${token}`)
    assert.equal(limited.status, 429)
    assert.deepEqual(await limited.json(), { error: { message: 'Too Many Requests' } })
    assert.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After')
    // the dashboard's sign-in counts the same wrong tokens
    const signIn = await fetch(`${gateway.url}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gateway.url },
      body: JSON.stringify({ token }),
    })
    assert.equal(signIn.status, 429)
    // a minute later, one more attempt a second has come back: the right token is answered again
    offsetMs = 60_000
    try {
      assert.equal((await keys(`Bearer ${token}`)).status, 200)
    } finally {
      offsetMs = 0
    }
  })
})
