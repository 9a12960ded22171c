import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

type Answer = { id?: number; result?: unknown; error?: { code: number; message: string; event?: number } }

/** A raw client: calls answered by id, and the close code and reason the gateway ends it with. */
async function connect(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers })
  const answers = new Map<number, (answer: Answer) => void>()
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Answer
    if (message.id !== undefined) answers.get(message.id)?.(message)
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  )
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  let nextId = 1
  const call = (method: string, params: unknown[] = []) => {
    const id = nextId++
    const answer = new Promise<Answer>((resolve) => answers.set(id, resolve))
    socket.send(JSON.stringify(rpcBody(method, params, id)))
    return answer
  }
  return { socket, call, closed }
}

describe('key changes reach open WebSockets', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  /** A fresh key (each test changes its own), active in the gateway, and a socket on it. */
  async function socketOnNewKey() {
    const { key } = await gateway.app.keyAdmin.create(unlimitedKey)
    await gateway.app.keys.refresh()
    const client = await connect(`${gateway.url.replace('http', 'ws')}/ws/v3/${key.key}`)
    const answer = await client.call('eth_chainId')
    assert.equal(answer.result, '0x7a69')
    return { key: key.key, ...client }
  }

  it('a revoked key: its socket is closed with 1008 "key revoked" by the registry reload, unasked', async () => {
    const { key, closed } = await socketOnNewKey()
    await gateway.app.keyAdmin.revoke(key)
    // no refresh here: the registry's own poll of the key version finds the revocation
    assert.deepEqual(await closed, { code: 1008, reason: 'key revoked' })
  })

  it('a methods allowlist added: the next call of another method is refused with -32002', async () => {
    const { key, call, socket } = await socketOnNewKey()
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'methods', ['eth_chainId'])
    await gateway.app.keys.refresh()
    const refused = await call('eth_blockNumber')
    assert.deepEqual(refused.error, { code: -32002, message: 'rejected due to project ID settings' })
    assert.equal((await call('eth_chainId')).result, '0x7a69', 'the listed method still answers')
    assert.equal(socket.readyState, WebSocket.OPEN)
    socket.close()
  })

  it("changed limits apply to the next message: the key's own daily limit refuses with 429", async () => {
    const { key, call, socket } = await socketOnNewKey()
    await gateway.app.keyAdmin.setLimits(key, { dailyCredits: 1 })
    await gateway.app.keys.refresh()
    const refused = await call('eth_chainId')
    assert.equal(refused.error?.code, 429)
    assert.equal(refused.error?.event, -33400)
    socket.close()
  })

  it('a network no longer allowed: the socket is closed with 1008 and the refusal', async () => {
    const { key, closed } = await socketOnNewKey()
    await gateway.app.keyAdmin.setNetworks(key, ['mainnet'], ['devnet', 'mainnet'])
    await gateway.app.keys.refresh()
    assert.deepEqual(await closed, { code: 1008, reason: 'rejected due to project ID settings' })
  })

  it('live subscriptions the methods allowlist no longer allows end with the socket (1008)', async () => {
    const { key, call, closed } = await socketOnNewKey()
    const subscribed = await call('eth_subscribe', ['newHeads'])
    assert.match(String(subscribed.result), /^0x[0-9a-f]{32}$/)
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'methods', ['eth_chainId'])
    await gateway.app.keys.refresh()
    assert.deepEqual(await closed, { code: 1008, reason: 'rejected due to project ID settings' })
  })

  it('a logs subscription whose contract the allowlist no longer allows ends with its socket (1008)', async () => {
    const a = `0x${'aa'.repeat(20)}`
    const b = `0x${'bb'.repeat(20)}`
    const first = await socketOnNewKey()
    await gateway.app.keyAdmin.addAllowlistEntries(first.key, 'contracts', [a, b])
    await gateway.app.keys.refresh()
    const second = await connect(`${gateway.url.replace('http', 'ws')}/ws/v3/${first.key}`)
    assert.match(String((await first.call('eth_subscribe', ['logs', { address: a }])).result), /^0x/)
    assert.match(String((await second.call('eth_subscribe', ['logs', { address: [a, b] }])).result), /^0x/)
    await gateway.app.keyAdmin.removeAllowlistEntries(first.key, 'contracts', [b])
    await gateway.app.keys.refresh()
    assert.deepEqual(await second.closed, { code: 1008, reason: 'rejected due to project ID settings' })
    // the subscription to A is still allowed: its socket stays and answers
    assert.equal((await first.call('eth_chainId')).result, '0x7a69')
    first.socket.close()
  })

  it('a rotated secret ends the sockets opened with the old one, and is not held against their client', async () => {
    const { key, secret } = await gateway.app.keyAdmin.create({ ...unlimitedKey, secret: true })
    await gateway.app.keys.refresh()
    const url = `${gateway.url.replace('http', 'ws')}/ws/v3/${key.key}`
    const basic = (value: string) => ({
      authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}`,
    })
    // more sockets than failed authentications a client may have in a burst (server.authFailureBurst, 20)
    const clients = await Promise.all(Array.from({ length: 25 }, () => connect(url, basic(secret as string))))

    // an origins allowlist does not apply to a request that sent the right secret: the sockets stay
    await gateway.app.keyAdmin.addAllowlistEntries(key.key, 'origins', ['https://app.example'])
    await gateway.app.keys.refresh()
    const [first] = clients as [Awaited<ReturnType<typeof connect>>]
    assert.equal((await first.call('eth_chainId')).result, '0x7a69')

    const rotated = await gateway.app.keyAdmin.rotateSecret(key.key)
    await gateway.app.keys.refresh()
    const closes = await Promise.all(clients.map((client) => client.closed))
    assert.deepEqual(
      closes.filter(
        (close) => close.code !== 1008 || close.reason !== 'invalid project id or project secret',
      ),
      [],
    )
    // the re-checks were not login attempts: the client connects again at once with the new secret
    const again = await connect(url, basic(rotated.secret))
    assert.equal((await again.call('eth_chainId')).result, '0x7a69')
    again.socket.close()
  })
})
