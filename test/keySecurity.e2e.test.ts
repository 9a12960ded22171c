import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const settingsError = { code: -32002, message: 'rejected due to project ID settings' }
const other = `0x${'12'.repeat(20)}`

describe('key security: secrets, allowlists, JWT, networks', () => {
  let node: TestNode
  let second: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    second = await startFakeUpstream({ kind: 'json', respond: () => '0x1' })
    gateway = await startTestGateway({
      config: {
        networks: [
          { name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] },
          { name: 'mainnet', chainId: 1, upstreams: [{ url: second.url }] },
        ],
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await second?.close()
    await node?.stop()
  })

  async function newKey(options: { secret?: boolean } = {}) {
    const created = await gateway.app.keyAdmin.create({ plan: 'team', ...options })
    await gateway.app.keys.refresh()
    return { key: created.key.key, secret: created.secret }
  }

  async function post(key: string, body: unknown, headers: Record<string, string> = {}, network = 'devnet') {
    return postJson(`${gateway.url}/${network}/v3/${key}`, body, {
      'content-type': 'application/json',
      ...headers,
    })
  }

  const basic = (user: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
  })

  async function assertRejected(response: Awaited<ReturnType<typeof post>>, id: unknown = 1) {
    assert.equal(response.status, 403)
    assert.deepEqual(response.json, { jsonrpc: '2.0', id, error: settingsError })
    assert.equal(response.headers.get('x-credits-charged'), '5')
  }

  /** A refusal of the whole request before the key admits it: from its headers, free, no balance shown. */
  function assertRefused(response: Awaited<ReturnType<typeof post>>, status = 403, error = settingsError) {
    assert.equal(response.status, status)
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: null, error })
    assert.equal(response.headers.get('x-credits-charged'), null)
    assert.equal(response.headers.get('x-credits-remaining'), null)
  }

  it('secret: right one passes, wrong one is 401, required and missing is 403', async () => {
    const { key, secret } = await newKey({ secret: true })
    assert.ok(secret)
    assert.equal((await post(key, rpcBody('eth_chainId'), basic('', secret))).status, 200)
    assert.equal(
      (await post(key, rpcBody('eth_chainId'), basic(key, secret))).status,
      200,
      'the key as user name',
    )
    assert.equal((await post(key, rpcBody('eth_chainId'))).status, 200, 'not required yet')
    const wrong = await post(key, rpcBody('eth_chainId'), basic('', `${secret}x`))
    assert.equal(wrong.status, 401)
    assert.deepEqual(wrong.json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'invalid project id or project secret' },
    })

    await gateway.app.keyAdmin.setSecurity(key, { requireSecret: true })
    await gateway.app.keys.refresh()
    // a key that requires its secret answers a request without it as a key that does not exist
    assertRefused(await post(key, rpcBody('eth_chainId')), 401, {
      code: -32001,
      message: 'invalid project id',
    })
    assert.equal((await post(key, rpcBody('eth_chainId'), basic('', secret))).status, 200)

    const rotated = await gateway.app.keyAdmin.rotateSecret(key)
    await gateway.app.keys.refresh()
    assert.equal(
      (await post(key, rpcBody('eth_chainId'), basic('', secret))).status,
      401,
      'the old secret is gone',
    )
    assert.equal((await post(key, rpcBody('eth_chainId'), basic('', rotated.secret))).status, 200)
  })

  it('origins: exact and wildcard entries pass, others and a missing Origin are refused', async () => {
    const { key } = await newKey()
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'origins', [
      'https://app.example.com',
      '*.example.org',
    ])
    await gateway.app.keys.refresh()
    for (const origin of ['https://app.example.com', 'https://a.example.org', 'http://deep.b.example.org']) {
      assert.equal((await post(key, rpcBody('eth_chainId'), { origin })).status, 200, origin)
    }
    for (const origin of ['http://app.example.com', 'https://example.org', 'https://evil.com']) {
      assertRefused(await post(key, rpcBody('eth_chainId'), { origin }))
    }
    assertRefused(await post(key, rpcBody('eth_chainId')))
  })

  it('user agents: a substring of the User-Agent passes', async () => {
    const { key } = await newKey()
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'userAgents', ['MyWallet/'])
    await gateway.app.keys.refresh()
    assert.equal(
      (await post(key, rpcBody('eth_chainId'), { 'user-agent': 'Mozilla MyWallet/2.1' })).status,
      200,
    )
    assertRefused(await post(key, rpcBody('eth_chainId'), { 'user-agent': 'curl/8.0' }))
  })

  it('methods: listed methods pass; others are refused, per element in a batch', async () => {
    const { key } = await newKey()
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'methods', ['eth_chainId', 'eth_blockNumber'])
    await gateway.app.keys.refresh()
    assert.equal((await post(key, rpcBody('eth_blockNumber'))).status, 200)
    await assertRejected(await post(key, rpcBody('eth_gasPrice')))
    const batch = await post(key, [rpcBody('eth_chainId', [], 1), rpcBody('eth_gasPrice', [], 2)])
    assert.equal(batch.status, 200)
    assert.deepEqual(batch.json, [
      { jsonrpc: '2.0', id: 1, result: '0x7a69' },
      { jsonrpc: '2.0', id: 2, error: settingsError },
    ])
  })

  it('contract addresses: calls naming listed contracts pass, others are refused', async () => {
    const { key } = await newKey()
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'contracts', [
      node.fixtures.demo.toUpperCase().replace('0X', '0x'),
    ])
    await gateway.app.keys.refresh()
    const data = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })
    assert.equal(
      (await post(key, rpcBody('eth_call', [{ to: node.fixtures.demo, data }, 'latest']))).status,
      200,
    )
    assert.equal((await post(key, rpcBody('eth_getBalance', [node.fixtures.demo, 'latest']))).status, 200)
    await assertRejected(await post(key, rpcBody('eth_call', [{ to: other, data }, 'latest'])))
    await assertRejected(await post(key, rpcBody('eth_getLogs', [{ fromBlock: '0x0' }])), 1)
    assert.equal(
      (await post(key, rpcBody('eth_blockNumber'))).status,
      200,
      'methods naming no contract are not checked',
    )
  })

  it('kinds are AND-ed; the right secret bypasses every allowlist', async () => {
    const { key, secret } = await newKey({ secret: true })
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'methods', ['eth_chainId'])
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'origins', ['example.com'])
    await gateway.app.keys.refresh()
    assert.equal((await post(key, rpcBody('eth_chainId'), { origin: 'https://example.com' })).status, 200)
    assertRefused(await post(key, rpcBody('eth_chainId'), { origin: 'https://other.com' }))
    await assertRejected(await post(key, rpcBody('eth_gasPrice'), { origin: 'https://example.com' }))
    assert.ok(secret)
    const bypass = await post(key, rpcBody('eth_gasPrice'), {
      origin: 'https://other.com',
      ...basic('', secret),
    })
    assert.equal(bypass.status, 200)
  })

  it('networks: a key limited to some networks is refused on the others', async () => {
    const { key } = await newKey()
    assert.equal((await post(key, rpcBody('eth_chainId'), {}, 'mainnet')).status, 200)
    await gateway.app.keyAdmin.setNetworks(key, ['devnet'], ['devnet', 'mainnet'])
    await gateway.app.keys.refresh()
    assert.equal((await post(key, rpcBody('eth_chainId'), {}, 'devnet')).status, 200)
    assertRefused(await post(key, rpcBody('eth_chainId'), {}, 'mainnet'))
  })

  it('JWT: RS256 and ES256 by kid; exp, aud and signature checked; claims narrow; require-JWT', async () => {
    const { key } = await newKey()
    const rsa = await generateKeyPair('RS256')
    const ec = await generateKeyPair('ES256')
    const stranger = await generateKeyPair('RS256')
    await gateway.app.keyAdmin.addJwtKey(key, 'rsa-1', await exportSPKI(rsa.publicKey))
    await gateway.app.keyAdmin.addJwtKey(key, 'ec-1', await exportSPKI(ec.publicKey))
    await gateway.app.keyAdmin.setSecurity(key, { requireJwt: true, jwtAudience: 'tollgate-test' })
    await gateway.app.keys.refresh()

    const sign = async (
      alg: 'RS256' | 'ES256',
      kid: string,
      privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'],
      claims: Record<string, unknown> = {},
      options: { aud?: string; exp?: number | null } = {},
    ) => {
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg, kid })
        .setAudience(options.aud ?? 'tollgate-test')
      if (options.exp !== null) jwt.setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600)
      return { authorization: `Bearer ${await jwt.sign(privateKey)}` }
    }
    const invalid = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'invalid JWT' } }

    assert.equal(
      (await post(key, rpcBody('eth_chainId'), await sign('RS256', 'rsa-1', rsa.privateKey))).status,
      200,
    )
    assert.equal(
      (await post(key, rpcBody('eth_chainId'), await sign('ES256', 'ec-1', ec.privateKey))).status,
      200,
    )

    // no JWT at all: answered as a key that does not exist (test/strangers.e2e.test.ts)
    assertRefused(await post(key, rpcBody('eth_chainId')), 401, {
      code: -32001,
      message: 'invalid project id',
    })
    for (const headers of [
      await sign('RS256', 'rsa-1', stranger.privateKey),
      await sign('RS256', 'nope', rsa.privateKey),
      await sign('RS256', 'rsa-1', rsa.privateKey, {}, { aud: 'someone-else' }),
      await sign('RS256', 'rsa-1', rsa.privateKey, {}, { exp: Math.floor(Date.now() / 1000) - 60 }),
      await sign('RS256', 'rsa-1', rsa.privateKey, {}, { exp: null }),
      { authorization: 'Bearer not.a.jwt' },
    ]) {
      const response = await post(key, rpcBody('eth_chainId'), headers)
      assert.equal(response.status, 401, JSON.stringify(headers))
      assert.deepEqual(response.json, invalid)
    }

    const narrowed = await sign('ES256', 'ec-1', ec.privateKey, {
      methods: ['eth_chainId'],
      origins: ['example.com'],
    })
    assert.equal(
      (await post(key, rpcBody('eth_chainId'), { ...narrowed, origin: 'https://example.com' })).status,
      200,
    )
    await assertRejected(
      await post(key, rpcBody('eth_blockNumber'), { ...narrowed, origin: 'https://example.com' }),
    )
    assertRefused(await post(key, rpcBody('eth_chainId'), { ...narrowed, origin: 'https://evil.com' }))
  })

  it('admin rules: 30 entries per allowlist, bad entries, failover only on plans that have it', async () => {
    const { key } = await newKey()
    const addresses = Array.from({ length: 31 }, (_, index) => `0x${index.toString(16).padStart(40, '0')}`)
    await assert.rejects(gateway.app.keyAdmin.addAllowlistEntries(key, 'contracts', addresses), /at most 30/)
    await assert.rejects(
      gateway.app.keyAdmin.addAllowlistEntries(key, 'contracts', ['0x12']),
      /not a 20-byte/,
    )
    await assert.rejects(
      gateway.app.keyAdmin.setLimits(key, { failover: true }),
      /does not include partner failover/,
    )
    await assert.rejects(gateway.app.keyAdmin.setLimits(key, { dailyCredits: 80_000_000 }), /can only lower/)
    await assert.rejects(gateway.app.keyAdmin.create({ plan: 'custom' }), /custom plan needs/)
    const { key: growth } = await gateway.app.keyAdmin.create({ plan: 'growth', failover: true })
    assert.equal(growth.settings.failover, true)
    await gateway.app.keyAdmin.create({ plan: 'core', account: 'solo' })
    await assert.rejects(
      gateway.app.keyAdmin.create({ account: 'solo' }),
      /the most its plan \(core\) allows/,
    )
  })
})
