import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { startWsProxy, type WsProxy } from './helpers/startWsProxy.ts'
import { until } from './helpers/until.ts'

type Request = { method: string; params: unknown[] }

/** The requests that ask a node for its head: the latest block, or the block number. */
const headRequests = (requests: readonly Request[]) =>
  requests.filter(
    (request) =>
      request.method === 'eth_blockNumber' ||
      (request.method === 'eth_getBlockByNumber' && request.params[0] === 'latest'),
  ).length

/**
 * An HTTP hop in front of `target` that, once shut, holds the head requests it is sent (a node slow
 * to answer them) until it is opened again; everything else goes through at once. `shutAfterNext()`:
 * it shuts as it answers its next head request, so the one after that (whenever it comes) is held.
 */
async function startHeadGate(target: string) {
  let shut = false
  let shutting = false
  const held: (() => void)[] = []
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString()
    const isHead = headRequests([JSON.parse(body)]) === 1
    if (shut && isHead) await new Promise<void>((resolve) => held.push(resolve))
    let answer: Response
    let text: string
    try {
      answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      text = await answer.text()
    } catch {
      // the node gone mid-call (the test stopping it): the connection drops, as a proxy's would
      req.socket.destroy()
      return
    }
    if (shutting && isHead) {
      shutting = false
      shut = true
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' })
    res.end(text)
  }
  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const open = () => {
    shut = false
    for (const release of held.splice(0)) release()
  }
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Head requests held now. */
    held: () => held.length,
    shutAfterNext: () => {
      shutting = true
    },
    open,
    close: () => {
      open()
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A client subscribed to newHeads through the gateway: the block numbers it was sent. */
async function subscribeHeads(url: string) {
  const socket = new WebSocket(url)
  const numbers: number[] = []
  let id: unknown
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString())
    if (message.id === 1) id = message.result
    else if (message.method === 'eth_subscription' && message.params.subscription === id) {
      numbers.push(Number(message.params.result.number))
    }
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  await until(() => id !== undefined, 'the subscription id')
  return { socket, numbers }
}

describe('one head tracker per network: one subscription or one poll stream per upstream', () => {
  let node: TestNode

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
  })
  after(async () => {
    await node?.stop()
  })

  describe('an upstream with a WebSocket', () => {
    let http: FakeUpstream
    let ws: WsProxy
    let gateway: TestGateway

    before(async () => {
      http = await startFakeUpstream({ kind: 'proxy', target: node.url })
      ws = await startWsProxy(node.wsUrl)
      gateway = await startTestGateway({
        config: {
          networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: http.url, ws: ws.url }] }],
          // no poll comes due in this test: every head after the start comes by newHeads
          upstreams: { headPollMs: 600_000 },
          gas: { enabled: true },
        },
      })
    })
    after(async () => {
      await gateway?.close()
      await ws?.close()
      await http?.close()
    })

    it('the subscriptions, the cache and the fee indexer ride one newHeads subscription; no head poll after the start', async () => {
      const client = await subscribeHeads(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
      const indexer = gateway.app.indexers.get(31337)
      assert.ok(indexer)
      try {
        // the tracker's subscription is live once a block's head has come through it
        await until(() => ws.sent.some((message) => message.method === 'eth_subscribe'), 'the subscription')
        const mined: number[] = []
        for (let index = 0; index < 5; index++) {
          await mineIncrement(node)
          mined.push(Number(await nodeRpc(node, 'eth_blockNumber')))
        }
        const last = mined[mined.length - 1] as number
        await until(() => client.numbers.includes(last), 'the client to hear the last block')
        await until(() => indexer.window()?.head === last, 'the fee indexer to reach the last block')
        for (const number of mined) assert.ok(client.numbers.includes(number), `block ${number} announced`)

        const subscribes = ws.sent.filter((message) => message.method === 'eth_subscribe')
        assert.deepEqual(
          subscribes.map((message) => message.params),
          [['newHeads']],
        )
        assert.equal(headRequests(http.requests), 1, 'one head request in all: the start')
      } finally {
        client.socket.close()
      }
    })
  })

  describe('upstreams without a WebSocket', () => {
    const headPollMs = 100
    let gates: Awaited<ReturnType<typeof startHeadGate>>[]
    let first: FakeUpstream
    let second: FakeUpstream
    let gateway: TestGateway

    before(async () => {
      // each upstream: the fake (it records what the gateway asks, as it comes), then a gate, then the node
      gates = [await startHeadGate(node.url), await startHeadGate(node.url)]
      first = await startFakeUpstream({ kind: 'proxy', target: gates[0]?.url ?? '' })
      second = await startFakeUpstream({ kind: 'proxy', target: gates[1]?.url ?? '' })
      gateway = await startTestGateway({
        upstreams: [first.url, second.url],
        // one interval for the head requests, the subscriptions and the fee indexer alike
        config: { upstreams: { headPollMs }, gas: { enabled: true } },
      })
    })
    after(async () => {
      await gateway?.close()
      await first?.close()
      await second?.close()
      for (const gate of gates ?? []) await gate.close()
    })

    it('each upstream gets one poll stream: no head request while its last one is unanswered, and polls go on', async () => {
      const indexer = gateway.app.indexers.get(31337)
      assert.ok(indexer)
      const upstreams = [first, second]
      const client = await subscribeHeads(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
      try {
        // the subscriptions and the fee indexer hear of a block through the polls
        await mineIncrement(node)
        const head = Number(await nodeRpc(node, 'eth_blockNumber'))
        await until(() => client.numbers.includes(head), 'the client to hear the block')
        await until(() => indexer.window()?.head === head, 'the fee indexer to reach the block')

        // one stream asks again only once its last head request is answered: with each upstream's
        // answers held (from the poll after the one each answers next), it sends nothing more, whereas
        // any other stream (a second loop, a component asking for the head by itself) adds its own
        for (const gate of gates) gate.shutAfterNext()
        await until(() => gates.every((gate) => gate.held() >= 1), 'a head request held on each upstream')
        const asked = upstreams.map((upstream) => headRequests(upstream.requests))
        // fault injection: the answers held for 5 poll intervals on purpose; a slower machine only
        // gives another stream fewer chances to show, it cannot make this fail
        await sleep(5 * headPollMs)
        assert.deepEqual(
          gates.map((gate) => gate.held()),
          [1, 1],
          'one unanswered head request on each upstream, and no other',
        )
        assert.deepEqual(
          upstreams.map((upstream) => headRequests(upstream.requests)),
          asked,
          'no head request while the last one is unanswered',
        )

        for (const gate of gates) gate.open()
        await until(
          () =>
            upstreams.every((upstream, index) => headRequests(upstream.requests) > (asked[index] as number)),
          'the polls to go on once answered',
        )
      } finally {
        client.socket.close()
      }
    })
  })
})
