import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'

/**
 * A real node behind a relay that keeps the bytes of every body it passes on: what tollgate
 * sends upstream, byte for byte (the gateway's own head polls included; tests pick their calls out).
 */
async function startRecordingRelay(
  target: string,
): Promise<{ url: string; bodies: Buffer[]; server: Server }> {
  const bodies: Buffer[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const body = Buffer.concat(chunks)
      bodies.push(body)
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server }
}

type Relay = Awaited<ReturnType<typeof startRecordingRelay>>

/** The bodies the relay passed on for calls of `method` (head polls and other calls left out). */
function sentBodies(relay: Relay, method: string): Buffer[] {
  return relay.bodies.filter((body) => (JSON.parse(body.toString()) as { method: string }).method === method)
}

/** The same, as text. */
function sentTexts(relay: Relay, method: string): string[] {
  return sentBodies(relay, method).map((body) => body.toString())
}

/**
 * Sends an eth_call whose call object names `to` twice (JSON.parse keeps the last, and the contract
 * allowlist reads that one) and checks that the node got one `to`, the last: the call written anew.
 */
async function expectLastToOnly(gateway: TestGateway, relay: Relay, block: string): Promise<void> {
  relay.bodies.length = 0
  const to = '0x5fbdb2315678afecb367f032d93f642f64180aa3'
  const first = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
  const call = `{"jsonrpc":"2.0","id":4,"method":"eth_call","params":[{"to":"${first}","to":"${to}"},"${block}"]}`
  await postJson(gateway.endpoint, call)
  const [sent, ...more] = sentTexts(relay, 'eth_call')
  assert.ok(sent !== undefined)
  assert.deepEqual(more, [])
  assert.equal(sent.split('"to"').length, 2, 'one to member')
  assert.deepEqual((JSON.parse(sent) as { params: unknown[] }).params, [{ to }, block])
}

describe('forwarding a call as the client wrote it', () => {
  let node: TestNode
  let relay: Relay
  let gateway: TestGateway
  const address = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'

  before(async () => {
    node = await startTestNode()
    relay = await startRecordingRelay(node.url)
    gateway = await startTestGateway({ upstreams: [relay.url], config: { cache: { enabled: false } } })
  })
  after(async () => {
    await gateway.close()
    await new Promise((resolve) => relay.server.close(resolve))
    await node.stop()
  })
  beforeEach(() => {
    relay.bodies.length = 0
  })

  it('a call whose params needed no change reaches the node as the client sent it, its id kept', async () => {
    const text = ` {"id": 90071992547409, "params": ["${address}" , "latest"], "method": "eth_getBalance", "jsonrpc": "2.0"}`
    const answer = await postJson(gateway.endpoint, text)
    assert.equal(answer.status, 200)
    assert.deepEqual(sentTexts(relay, 'eth_getBalance'), [text])
    const direct = await postJson(node.url, text)
    assert.deepEqual(answer.json, direct.json)
    assert.equal((answer.json as { id: unknown }).id, 90071992547409)
  })

  it('forwards the bytes the client sent when they are UTF-8, and the text tollgate read when not', async () => {
    const post = async (body: Buffer) => {
      const answer = await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      return (await answer.json()) as { id: unknown; result?: unknown }
    }
    const call = (id: Buffer) =>
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":"'),
        id,
        Buffer.from(`","method":"eth_getBalance","params":["${address}","latest"]}`),
      ])

    // an id of two-byte characters: the same bytes reach the node, the answer names the id
    const utf8 = call(Buffer.from('é€', 'utf8'))
    const answered = await post(utf8)
    assert.equal(answered.id, 'é€')
    assert.ok('result' in answered)
    assert.deepEqual(sentBodies(relay, 'eth_getBalance'), [utf8])

    // a byte that is not UTF-8 reads as U+FFFD: the node gets that text, not a byte it may read otherwise
    relay.bodies.length = 0
    const invalid = call(Buffer.from([0x61, 0xff]))
    const replaced = await post(invalid)
    assert.equal(replaced.id, 'a\uFFFD')
    assert.deepEqual(sentBodies(relay, 'eth_getBalance'), [Buffer.from(invalid.toString())])
    assert.notDeepEqual(sentBodies(relay, 'eth_getBalance'), [invalid])
  })

  it('answers declare their length, forwarded or refused, without chunked framing', async () => {
    const bodies = [
      JSON.stringify(rpcBody('eth_getBalance', [address, 'latest'])),
      // the refusal's id in two-byte characters: the length is in bytes
      '{"jsonrpc":"2.0","id":"é€","method":"no_suchMethod","params":[]}',
      'not json',
    ]
    for (const body of bodies) {
      const answer = await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
        body,
      })
      const text = await answer.text()
      assert.ok(text.startsWith('{"jsonrpc"'), text)
      assert.equal(answer.headers.get('content-length'), String(Buffer.byteLength(text)), body)
      assert.equal(answer.headers.get('transfer-encoding'), null, body)
    }
  })

  it('a call whose params were normalised is written anew with them', async () => {
    // eth_call without its block: sent with `latest`, as geth reads it
    const text = `{"jsonrpc":"2.0","id":"a","method":"eth_call","params":[{"to":"${address}"}]}`
    await postJson(gateway.endpoint, text)
    assert.deepEqual(
      sentTexts(relay, 'eth_call').map((sent) => JSON.parse(sent)),
      [{ jsonrpc: '2.0', id: 'a', method: 'eth_call', params: [{ to: address }, 'latest'] }],
    )
  })

  it('a body with a member twice reaches the node as tollgate read it (the last), never as written', async () => {
    // the first method is one tollgate never forwards; JSON.parse keeps the last, and so must the node
    const twice = `{"jsonrpc":"2.0","id":3,"method":"eth_sendTransaction","params":[],"method":"eth_getBalance","params":["${address}","latest"]}`
    const answer = await postJson(gateway.endpoint, twice)
    assert.equal(answer.status, 200)
    assert.equal((answer.json as { id: unknown }).id, 3)
    assert.ok('result' in (answer.json as object))
    assert.deepEqual(sentTexts(relay, 'eth_sendTransaction'), [])
    const sent = sentTexts(relay, 'eth_getBalance')
    assert.deepEqual(
      sent.map((text) => JSON.parse(text)),
      [{ jsonrpc: '2.0', id: 3, method: 'eth_getBalance', params: [address, 'latest'] }],
    )
    assert.equal(sent[0]?.split('"method"').length, 2, 'one method member')

    // inside the params too: the call object's `to`, which the contract allowlist reads
    await expectLastToOnly(gateway, relay, 'latest')
  })

  it('a member besides the four reaches the node never, even in a body written as JSON.stringify writes it', async () => {
    // tollgate reads no params here (eth_gasPrice takes none); a node matching names ignoring case
    // would read `Params` as its params: the call is written anew, without it
    const text = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'eth_gasPrice', Params: ['0x1'] })
    const answer = await postJson(gateway.endpoint, text)
    assert.equal(answer.status, 200)
    assert.ok('result' in (answer.json as object))
    assert.deepEqual(
      sentTexts(relay, 'eth_gasPrice').map((sent) => JSON.parse(sent)),
      [{ jsonrpc: '2.0', id: 5, method: 'eth_gasPrice', params: [] }],
    )
  })

  it('an id or number written otherwise than JSON writes it reaches the node in its parsed form', async () => {
    await postJson(
      gateway.endpoint,
      `{"jsonrpc":"2.0","id":7.0,"method":"eth_getBalance","params":["${address}","latest"]}`,
    )
    assert.deepEqual(
      sentTexts(relay, 'eth_getBalance').map((text) => JSON.parse(text).id),
      [7],
    )
    assert.match(sentTexts(relay, 'eth_getBalance')[0] ?? '', /"id":7,/)
  })
})

describe('forwarding as written with the cache on (the text read only when a call is forwarded)', () => {
  let node: TestNode
  let relay: Relay
  let gateway: TestGateway
  const address = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'

  before(async () => {
    node = await startTestNode()
    relay = await startRecordingRelay(node.url)
    gateway = await startTestGateway({ upstreams: [relay.url] })
  })
  after(async () => {
    await gateway.close()
    await new Promise((resolve) => relay.server.close(resolve))
    await node.stop()
  })

  it('a call the cache never keeps goes as written; one with a member twice goes as tollgate read it', async () => {
    // `pending` state is never kept: the call is forwarded, as its client wrote it
    const text = ` {"id": 11, "params": ["${address}" , "pending"], "method": "eth_getBalance", "jsonrpc": "2.0"}`
    const answer = await postJson(gateway.endpoint, text)
    assert.equal(answer.status, 200)
    assert.deepEqual(sentTexts(relay, 'eth_getBalance'), [text])

    await expectLastToOnly(gateway, relay, 'pending')
  })
})

describe('a large cached answer is written out in parts', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode()
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway.close()
    await node.stop()
  })

  it('a hit on a kept result of several KiB is the whole answer, its length declared, compressed or not', async () => {
    // the seeded block with the most transactions, asked for by hash with full transactions (immutable)
    const head = Number(await nodeRpc(node, 'eth_blockNumber'))
    let largest = { hash: '', bytes: 0 }
    for (let number = 1; number <= head; number++) {
      const block = await postJson(
        node.url,
        rpcBody('eth_getBlockByNumber', [`0x${number.toString(16)}`, true]),
      )
      const { hash } = (block.json as { result: { hash: string } }).result
      if (block.text.length > largest.bytes) largest = { hash, bytes: block.text.length }
    }
    // results over 4 KiB are kept as bytes, and served in parts
    assert.ok(largest.bytes > 4200, `a block of ${largest.bytes} bytes`)
    const body = rpcBody('eth_getBlockByHash', [largest.hash, true], 'x')
    const expected = (await postJson(node.url, body)).json
    for (let round = 0; round < 3; round++) {
      // the first round fills the cache; the others are hits
      const plain = await fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
        body: JSON.stringify(body),
      })
      const text = await plain.text()
      assert.equal(plain.headers.get('content-length'), String(Buffer.byteLength(text)))
      assert.equal(plain.headers.get('transfer-encoding'), null)
      assert.deepEqual(JSON.parse(text), expected)
      // fetch asks for gzip, deflate, br and decodes it
      const compressed = await postJson(gateway.endpoint, body)
      assert.ok(compressed.headers.get('content-encoding'), 'compressed')
      assert.deepEqual(compressed.json, expected)
    }
  })
})
