import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
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
    let first: FakeUpstream
    let second: FakeUpstream
    let gateway: TestGateway

    before(async () => {
      first = await startFakeUpstream({ kind: 'proxy', target: node.url })
      second = await startFakeUpstream({ kind: 'proxy', target: node.url })
      gateway = await startTestGateway({
        upstreams: [first.url, second.url],
        // the three intervals that were three loops, now one (the keys still work)
        config: {
          upstreams: { headPollMs },
          websocket: { headPollMs },
          gas: { enabled: true, pollMs: headPollMs },
        },
      })
    })
    after(async () => {
      await gateway?.close()
      await first?.close()
      await second?.close()
    })

    it('each upstream gets one poll stream: at most one head request per headPollMs, and polls go on', async () => {
      const indexer = gateway.app.indexers.get(31337)
      assert.ok(indexer)
      const client = await subscribeHeads(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
      try {
        const start = [headRequests(first.requests), headRequests(second.requests)]
        const began = performance.now()
        await mineIncrement(node)
        const head = Number(await nodeRpc(node, 'eth_blockNumber'))
        await until(() => client.numbers.includes(head), 'the client to hear the block')
        await until(() => indexer.window()?.head === head, 'the fee indexer to reach the block')
        await until(
          () => headRequests(first.requests) - (start[0] as number) >= 5,
          'the health polls to go on',
        )
        const rounds = (performance.now() - began) / headPollMs
        for (const [index, upstream] of [first, second].entries()) {
          const polls = headRequests(upstream.requests) - (start[index] as number)
          // timers fire no sooner than due: one stream cannot poll more often than this
          assert.ok(polls <= Math.floor(rounds) + 2, `${polls} head requests in ${rounds.toFixed(1)} rounds`)
          assert.ok(polls >= 1, 'health polls go on')
        }
      } finally {
        client.socket.close()
      }
    })
  })
})
