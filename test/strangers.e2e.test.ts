import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { WebSocket } from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const creditHeaders = ['x-credits-charged', 'x-credits-remaining', 'x-ratelimit-reset']
const unknownKey = 'f'.repeat(32)
const stranger = '203.0.113.7'
const owner = '198.51.100.1'

type Signer = Awaited<ReturnType<typeof generateKeyPair>>['privateKey']

/**
 * The whole answer to one request sent as `head` (its request line and headers) and `body` on a
 * connection of its own, as the bytes that came back, but the Date header's line (a second apart).
 */
async function exchange(url: string, head: string[], body = ''): Promise<string> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
  await new Promise<void>((resolve, reject) => {
    socket.on('close', () => resolve())
    socket.on('error', reject)
  })
  return Buffer.concat(chunks)
    .toString('latin1')
    .replace(/\r\ndate: [^\r]*/i, '')
}

/**
 * Nothing a stranger does costs a key's owner: requests that have not proved what the key requires
 * (its secret, its JWT, its origin rules, a network it may use) take no credits and no per-second
 * allowance, show no balance, and a key that requires its secret or a JWT answers them as a key that
 * does not exist.
 */
describe('strangers: refusals before the key is proved', () => {
  let node: TestNode
  let gateway: TestGateway
  let key: string
  let secret: string
  /** A key with a secret that requires a JWT signed by `jwtSigner` under kid `k1`. */
  let jwtKey: string
  let jwtKeySecret: string
  let jwtSigner: Signer

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // failed authentications are counted per client address: a stranger's and an owner's differ
    gateway = await startTestGateway({
      upstreams: [node.url],
      config: { server: { host: '127.0.0.1', port: 0, trustedProxies: ['127.0.0.1'] } },
    })
    // the core plan: 500 credits a second, what a flood of 5-credit refusals used to drain
    const created = await gateway.app.keyAdmin.create({ plan: 'core', secret: true })
    key = created.key.key
    secret = created.secret as string
    await gateway.app.keyAdmin.setSecurity(key, { requireSecret: true })
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'origins', ['https://app.example'])
    const withJwt = await gateway.app.keyAdmin.create({ plan: 'core', secret: true })
    jwtKey = withJwt.key.key
    jwtKeySecret = withJwt.secret as string
    const pair = await generateKeyPair('ES256')
    jwtSigner = pair.privateKey
    await gateway.app.keyAdmin.addJwtKey(jwtKey, 'k1', await exportSPKI(pair.publicKey))
    await gateway.app.keyAdmin.setSecurity(jwtKey, { requireJwt: true })
    await gateway.app.keys.refresh()
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const basic = (password: string) => ({
    authorization: `Basic ${Buffer.from(`:${password}`).toString('base64')}`,
  })
  /** A call from `from`: the stranger's address unless an owner's is given. */
  const post = (path: string, headers: Record<string, string> = {}, from = stranger) =>
    postJson(`${gateway.url}${path}`, rpcBody('eth_chainId'), {
      'content-type': 'application/json',
      'x-forwarded-for': from,
      ...headers,
    })

  /** Status, body and every header but the date: what a stranger can compare. */
  function seen(response: Awaited<ReturnType<typeof post>>) {
    const headers = [...response.headers].filter(([name]) => name !== 'date')
    return { status: response.status, text: response.text, headers }
  }

  it('a key that requires its secret answers a stranger as a key that does not exist', async () => {
    assert.deepEqual(seen(await post(`/v3/${key}`)), seen(await post(`/v3/${unknownKey}`)))
    assert.deepEqual((await post(`/v3/${key}`)).json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'invalid project id' },
    })
    // whatever credentials it sends: a wrong secret, another user name, a JWT
    const credentials = (asKey: string) => [
      basic('wrong').authorization,
      `Basic ${Buffer.from('bob:').toString('base64')}`,
      `Basic ${Buffer.from(`${asKey}:`).toString('base64')}`,
      'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln',
    ]
    const unknownCredentials = credentials(unknownKey)
    for (const [index, authorization] of credentials(key).entries()) {
      const known = seen(await post(`/v3/${key}`, { authorization }))
      const unknown = seen(
        await post(`/v3/${unknownKey}`, { authorization: unknownCredentials[index] ?? '' }),
      )
      assert.deepEqual(known, unknown, authorization)
    }
    const wrong = await post(`/v3/${key}`, basic('wrong'))
    assert.equal(wrong.status, 401)
    assert.deepEqual((wrong.json as { error: unknown }).error, {
      code: -32001,
      message: 'invalid project id or project secret',
    })
  })

  it('a key that requires a JWT answers a stranger as a key that does not exist; its secret hears why', async () => {
    const valid = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setExpirationTime('10m')
      .sign(jwtSigner)
    assert.equal((await post(`/v3/${jwtKey}`, { authorization: `Bearer ${valid}` }, owner)).status, 200)
    const refused = await post(`/v3/${jwtKey}`, {}, owner)
    assert.equal(refused.status, 401)
    assert.deepEqual((refused.json as { error: unknown }).error, {
      code: -32001,
      message: 'invalid project id',
    })
    // the key's own secret proves the caller holds the key: it hears what is missing
    const withSecret = await post(`/v3/${jwtKey}`, basic(jwtKeySecret), owner)
    assert.equal(withSecret.status, 401)
    assert.deepEqual((withSecret.json as { error: unknown }).error, { code: -32001, message: 'invalid JWT' })
  })

  it('byte for byte, over HTTP and on the WebSocket upgrade, whatever a stranger sends', async () => {
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setExpirationTime('10m')
      .sign((await generateKeyPair('ES256')).privateKey)
    /** What a stranger may send to `asKey`: nothing, an empty or wrong secret, a user name, JWTs. */
    const credentials = (asKey: string) => [
      undefined,
      basic('').authorization,
      `Basic ${Buffer.from(`${asKey}:`).toString('base64')}`,
      basic('wrong').authorization,
      `Basic ${Buffer.from(`${asKey}:wrong`).toString('base64')}`,
      `Basic ${Buffer.from('bob:').toString('base64')}`,
      'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln',
      `Bearer ${foreign}`,
    ]
    const body = JSON.stringify(rpcBody('eth_chainId'))
    const asks = (path: string, authorization: string | undefined, from: string) => {
      const common = ['host: 127.0.0.1', `x-forwarded-for: ${from}`]
      if (authorization !== undefined) common.push(`authorization: ${authorization}`)
      return {
        http: [
          `POST /v3/${path} HTTP/1.1`,
          ...common,
          'content-type: application/json',
          `content-length: ${body.length}`,
          'connection: close',
        ],
        upgrade: [
          `GET /ws/v3/${path} HTTP/1.1`,
          ...common,
          'upgrade: websocket',
          'connection: Upgrade',
          'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-version: 13',
        ],
      }
    }
    let client = 0
    const statusLines = new Set<string>()
    for (const known of [key, jwtKey]) {
      for (const [index, authorization] of credentials(known).entries()) {
        // each pair from an address of its own, to a new unknown key: the failure limiter sees both alike
        const from = `192.0.2.${++client}`
        const stranger = randomBytes(16).toString('hex')
        const unknownAuthorization = credentials(stranger)[index]
        const knownAsks = asks(known, authorization, from)
        const unknownAsks = asks(stranger, unknownAuthorization, from)
        for (const road of ['http', 'upgrade'] as const) {
          const knownAnswer = await exchange(gateway.url, knownAsks[road], road === 'http' ? body : '')
          const unknownAnswer = await exchange(gateway.url, unknownAsks[road], road === 'http' ? body : '')
          assert.equal(
            knownAnswer,
            unknownAnswer,
            `${road} ${known === key ? 'secret' : 'JWT'} ${authorization}`,
          )
          statusLines.add(knownAnswer.slice(0, knownAnswer.indexOf('\r\n')))
        }
      }
    }
    assert.deepEqual([...statusLines], ['HTTP/1.1 401 Unauthorized'])
  })

  it('refusals before the key is proved take nothing and show nothing; the owners are served', async () => {
    // a second key that asks no secret, only an origin: a stranger from another page proves nothing
    const created = await gateway.app.keyAdmin.create({ plan: 'core' })
    const pageKey = created.key.key
    await gateway.app.keyAdmin.addAllowlistEntries(pageKey, 'origins', ['https://app.example'])
    await gateway.app.keys.refresh()
    const refusals = [
      () => post(`/v3/${key}`),
      () => post(`/v3/${key}`, basic('wrong')),
      () => post(`/v3/${pageKey}`, { origin: 'https://evil.example' }),
      () => post(`/nowhere/v3/${pageKey}`, { origin: 'https://app.example' }),
    ]
    // 280 refusals at 5 credits each were nearly three seconds of the core plan's allowance
    const statuses = new Set<number>()
    for (let round = 0; round < 70; round++) {
      for (const refuse of refusals) {
        const response = await refuse()
        statuses.add(response.status)
        for (const name of creditHeaders) assert.equal(response.headers.get(name), null, name)
      }
    }
    // the wrong secrets are slowed by the failure limiter (429, per client address): what slows strangers
    assert.deepEqual([...statuses].sort(), [401, 403, 404, 429])

    for (const [ownKey, headers] of [
      [key, basic(secret)],
      [pageKey, { origin: 'https://app.example' }],
    ] as const) {
      const served = []
      for (let call = 0; call < 50; call++) served.push(await post(`/v3/${ownKey}`, headers, owner))
      assert.deepEqual(new Set(served.map((response) => response.status)), new Set([200]))
      const last = served[served.length - 1] as Awaited<ReturnType<typeof post>>
      // the owner's own calls of 5 credits, and nothing else
      const spent = 3_000_000 - Number(last.headers.get('x-credits-remaining'))
      assert.equal(spent, 50 * 5)
    }
  })

  it('a refusal of the network costs a key that proved its secret nothing either', async () => {
    const before = await post(`/v3/${key}`, basic(secret), owner)
    const refused = await post(`/nowhere/v3/${key}`, basic(secret), owner)
    assert.equal(refused.status, 404)
    for (const name of creditHeaders) assert.equal(refused.headers.get(name), null, name)
    const after = await post(`/v3/${key}`, basic(secret), owner)
    assert.equal(
      Number(before.headers.get('x-credits-remaining')) - Number(after.headers.get('x-credits-remaining')),
      5,
      'only the second served call was charged',
    )
  })

  it('the Gas API and the WebSocket upgrade refuse a stranger for free, with no balance shown', async () => {
    const gas = await fetch(`${gateway.url}/v3/${key}/networks/31337/baseFeePercentile`)
    assert.equal(gas.status, 401)
    for (const name of creditHeaders) assert.equal(gas.headers.get(name), null, name)
    const unsupported = await fetch(`${gateway.url}/v3/${key}/networks/6001/baseFeePercentile`, {
      headers: { ...basic(secret), 'x-forwarded-for': owner },
    })
    assert.equal(unsupported.status, 400)
    for (const name of creditHeaders) assert.equal(unsupported.headers.get(name), null, name)

    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${key}`)
    const status = await new Promise<number | undefined>((resolve) => {
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode))
      socket.on('open', () => resolve(undefined))
      socket.on('error', () => undefined)
    })
    socket.terminate()
    assert.equal(status, 401)
    const served = await post(`/v3/${key}`, basic(secret), owner)
    assert.equal(served.headers.get('x-credits-charged'), '5')
  })

  it('the body of a request its key does not admit is never read', async () => {
    // a body announced as 4 MiB of which only the first bytes come: the answer does not wait for the rest
    const answer = await new Promise<{ status: number | undefined; connection: string | undefined }>(
      (resolve, reject) => {
        const request = httpRequest(`${gateway.url}/v3/${unknownKey}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(4 * 1024 * 1024) },
        })
        request.on('response', (response) => {
          resolve({ status: response.statusCode, connection: response.headers.connection })
          response.resume()
          request.destroy()
        })
        request.on('error', reject)
        request.write('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[')
      },
    )
    assert.deepEqual(answer, { status: 401, connection: 'close' })
  })
})
