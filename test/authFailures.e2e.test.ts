import assert from 'node:assert/strict'
import { randomBytes, scryptSync } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import WebSocket from 'ws'
import { rpcBody } from './helpers/postJson.ts'
import { requestFrom } from './helpers/requestFrom.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const burst = 3
const tooMany = {
  code: 429,
  message: 'Too Many Requests',
  details: 'too many failed authentications; try again later',
}
const wrongSecret = { code: -32001, message: 'invalid project id or project secret' }
const basic = (secret: string, user = '') => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`

describe('failed authentications: counted per client address, then 429 unchecked', () => {
  let node: TestNode
  let gateway: TestGateway
  // time stands still: no attempt comes back during the test
  const frozenAt = Date.now()

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({
      upstreams: [node.url],
      clock: { now: () => frozenAt },
      config: { auth: { failureBurst: burst, failuresPerMinute: 1 } },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  async function keyWithSecret() {
    const created = await gateway.app.keyAdmin.create({ plan: 'team', secret: true })
    await gateway.app.keys.refresh()
    return { key: created.key.key, secret: created.secret as string }
  }

  const post = (key: string, authorization: string | undefined, localAddress: string) =>
    requestFrom(`${gateway.url}/devnet/v3/${key}`, {
      localAddress,
      body: JSON.stringify(rpcBody('eth_chainId')),
      headers: {
        'content-type': 'application/json',
        ...(authorization === undefined ? {} : { authorization }),
      },
    })

  it('JSON-RPC: 401 for each of the first wrong secrets, then 429 with Retry-After, for the right secret too; free', async () => {
    const { key, secret } = await keyWithSecret()
    const entry = gateway.app.keys.findActiveKey(key)
    assert.ok(entry)
    const remaining = gateway.app.meter.remainingCredits(entry.subject)
    for (let i = 0; i < burst; i++) {
      const wrong = await post(key, basic(`${secret}x`), '127.0.0.1')
      assert.equal(wrong.status, 401)
      assert.deepEqual(wrong.json, { jsonrpc: '2.0', id: null, error: wrongSecret })
    }
    for (const attempt of [basic(`${secret}x`), basic(secret), basic(secret, key)]) {
      const refused = await post(key, attempt, '127.0.0.1')
      assert.equal(refused.status, 429)
      assert.deepEqual(refused.json, { jsonrpc: '2.0', id: null, error: tooMany })
      assert.equal(refused.headers['retry-after'], '60', 'one attempt a minute comes back')
      assert.equal(refused.headers['x-credits-charged'], undefined)
    }
    assert.equal(gateway.app.meter.remainingCredits(entry.subject), remaining, 'nothing charged')
    assert.equal((await post(key, undefined, '127.0.0.1')).status, 200, 'no credential: nothing to refuse')
    assert.equal(
      (await post(key, basic(secret), '127.0.0.2')).status,
      200,
      'another address is not locked out',
    )
  })

  it('a key under attack: addresses that failed wait, a client with a clean record still gets in', async () => {
    const { key, secret } = await keyWithSecret()
    // one failure each from several addresses empties the key's allowance
    for (const address of ['127.0.1.1', '127.0.1.2', '127.0.1.3']) {
      assert.equal((await post(key, basic('wrong'), address)).status, 401)
    }
    assert.equal((await post(key, basic(secret), '127.0.1.1')).status, 429, 'failed before: waits')
    assert.equal((await post(key, basic(secret), '127.0.1.9')).status, 200, 'never failed: checked')
    const { key: otherKey, secret: otherSecret } = await keyWithSecret()
    assert.equal((await post(otherKey, basic(otherSecret), '127.0.1.1')).status, 200, 'another key')
  })

  it('wrong JWTs count too', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const { key } = await keyWithSecret()
    await gateway.app.keyAdmin.addJwtKey(key, 'k1', await exportSPKI(publicKey))
    await gateway.app.keys.refresh()
    const sign = (exp: number) =>
      new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setExpirationTime(exp).sign(privateKey)
    const good = `Bearer ${await sign(Math.floor(frozenAt / 1000) + 3600)}`
    const expired = `Bearer ${await sign(Math.floor(frozenAt / 1000) - 10)}`
    assert.equal((await post(key, good, '127.0.2.1')).status, 200)
    for (let i = 0; i < burst; i++) {
      const wrong = await post(key, expired, '127.0.2.1')
      assert.equal(wrong.status, 401)
      assert.deepEqual(wrong.json, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'invalid JWT' },
      })
    }
    const refused = await post(key, good, '127.0.2.1')
    assert.equal(refused.status, 429)
    assert.deepEqual(refused.json, { jsonrpc: '2.0', id: null, error: tooMany })
  })

  it('the Gas API and WebSocket upgrades count and refuse alike', async () => {
    const { key, secret } = await keyWithSecret()
    const gas = (authorization: string, localAddress: string) =>
      requestFrom(`${gateway.url}/networks/31337/suggestedGasFees`, {
        method: 'GET',
        headers: { authorization },
        localAddress,
      })
    for (let i = 0; i < burst; i++) {
      const wrong = await gas(basic('wrong', key), '127.0.3.1')
      assert.equal(wrong.status, 401)
      assert.deepEqual(wrong.json, { statusCode: 401, message: wrongSecret.message })
    }
    const refused = await gas(basic(secret, key), '127.0.3.1')
    assert.equal(refused.status, 429)
    assert.deepEqual(refused.json, { statusCode: 429, message: tooMany.message, details: tooMany.details })
    assert.equal(refused.headers['retry-after'], '60')
    assert.equal(refused.headers['x-credits-charged'], undefined)

    // the same address, locked out by its Gas API failures, on a WebSocket upgrade
    let retryAfter: string | undefined
    const upgrade = (localAddress: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/devnet/ws/v3/${key}`, {
          headers: { authorization: basic(secret) },
          localAddress,
        })
        socket.on('unexpected-response', (_req, res) => {
          retryAfter = res.headers['retry-after']
          resolve(res.statusCode ?? 0)
          socket.terminate()
        })
        socket.on('open', () => {
          resolve(101)
          socket.close()
        })
        socket.on('error', reject)
      })
    assert.equal(await upgrade('127.0.3.1'), 429)
    assert.match(retryAfter ?? '', /^[1-9]\d*$/, 'a refused upgrade says when to come back')
    assert.equal(await upgrade('127.0.3.2'), 101)
  })

  it('a legacy scrypt hash keeps working and is replaced by its HMAC on first use', async () => {
    const { key } = await keyWithSecret()
    const secret = randomBytes(16).toString('hex')
    const salt = randomBytes(16)
    const hash = scryptSync(secret, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 })
    const legacy = ['scrypt', 2 ** 15, 8, 1, salt.toString('base64'), hash.toString('base64')].join('$')
    const stored = await gateway.app.keyStore.getKey(key)
    assert.ok(stored)
    await gateway.app.keyStore.updateKeySettings(key, { ...stored.settings, secretHash: legacy })
    await gateway.app.keys.refresh()

    assert.equal((await post(key, basic(`${secret}0`), '127.0.4.1')).status, 401)
    assert.equal((await gateway.app.keyStore.getKey(key))?.settings.secretHash, legacy)
    assert.equal((await post(key, basic(secret), '127.0.4.1')).status, 200)
    const upgraded = (await gateway.app.keyStore.getKey(key))?.settings.secretHash
    assert.match(upgraded ?? '', /^hmac-sha256\$/)
    await gateway.app.keys.refresh()
    assert.equal(gateway.app.keys.findActiveKey(key)?.access.secretHash, upgraded)
    assert.equal((await post(key, basic(secret), '127.0.4.1')).status, 200)
    assert.equal((await post(key, basic(`${secret}0`), '127.0.4.2')).status, 401)
  })
})

describe('behind a load balancer (server.trustedProxies): failed authentications count per client', () => {
  let node: TestNode
  let trusting: TestGateway
  let plain: TestGateway
  const frozenAt = Date.now()

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    const config = { auth: { failureBurst: burst, failuresPerMinute: 1 } }
    // the test's requests come from 127.0.0.1: the "load balancer"
    trusting = await startTestGateway({
      upstreams: [node.url],
      clock: { now: () => frozenAt },
      config: { ...config, server: { trustedProxies: ['127.0.0.0/8'] } },
    })
    plain = await startTestGateway({ upstreams: [node.url], clock: { now: () => frozenAt }, config })
  })
  after(async () => {
    await trusting?.close()
    await plain?.close()
    await node?.stop()
  })

  async function attack(gateway: TestGateway) {
    const created = await gateway.app.keyAdmin.create({ plan: 'team', secret: true })
    await gateway.app.keys.refresh()
    const { key } = created.key
    const secret = created.secret as string
    const post = (authorization: string, client: string) =>
      requestFrom(`${gateway.url}/devnet/v3/${key}`, {
        localAddress: '127.0.0.1',
        body: JSON.stringify(rpcBody('eth_chainId')),
        headers: {
          'content-type': 'application/json',
          authorization,
          // what the client wrote (ignored), then what the load balancer appended
          'x-forwarded-for': `10.9.9.9, ${client}`,
        },
      })
    for (let i = 0; i < burst; i++)
      assert.equal((await post(basic(`${secret}x`), '198.51.100.1')).status, 401)
    return {
      attacker: (await post(basic(secret), '198.51.100.1')).status,
      other: (await post(basic(secret), '198.51.100.2')).status,
    }
  }

  it("trusted: the attacker's address is refused, another client behind the same balancer is not", async () => {
    assert.deepEqual(await attack(trusting), { attacker: 429, other: 200 })
  })

  it('not trusted: X-Forwarded-For is ignored, every client is the balancer', async () => {
    assert.deepEqual(await attack(plain), { attacker: 429, other: 429 })
  })
})
