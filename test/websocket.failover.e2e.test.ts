import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { startWsProxy, type WsProxy } from './helpers/startWsProxy.ts'
import { until } from './helpers/until.ts'
import { untilAnnounced } from './helpers/untilAnnounced.ts'

type Head = { number: string; hash: string }
type Log = { blockNumber: string; blockHash: string; removed: boolean }

/** A client subscribed to newHeads and to the Demo contract's logs, recording what it is sent. */
async function subscriber(url: string, demo: string, withLogs = true) {
  const socket = new WebSocket(url)
  const heads: Head[] = []
  const logs: Log[] = []
  let headsId = ''
  let logsId = ''
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString())
    if (message.id === 1) headsId = message.result
    if (message.id === 2) logsId = message.result
    if (message.method !== 'eth_subscription') return
    if (message.params.subscription === headsId) heads.push(message.params.result)
    if (message.params.subscription === logsId) logs.push(message.params.result)
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  if (withLogs) socket.send(JSON.stringify(rpcBody('eth_subscribe', ['logs', { address: demo }], 2)))
  await until(() => headsId !== '' && (!withLogs || logsId !== ''))
  return { socket, heads, logs }
}

describe('WebSocket: shared subscriptions, upstream failover, reorgs', () => {
  let node: TestNode
  let proxy: WsProxy
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    proxy = await startWsProxy(node.wsUrl)
    gateway = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url, ws: proxy.url }] }],
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await proxy?.close()
    await node?.stop()
  })

  const url = () => `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`
  const rpc = async (method: string, params: unknown[] = []) =>
    ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
  /** One Demo.increment() in a block of its own, mined before this resolves. */
  const increment = () => mineIncrement(node)

  it('1,000 clients subscribed to newHeads ride one upstream subscription', async () => {
    const clients = await Promise.all(
      Array.from({ length: 1_000 }, () => subscriber(url(), node.fixtures.demo, false)),
    )
    try {
      await increment()
      await until(() => clients.every((client) => client.heads.length >= 1))
      // every subscription the gateway made since it started (its head tracker's may come before the clients)
      const subscribes = proxy.sent.filter((message) => message.method === 'eth_subscribe')
      assert.deepEqual(
        subscribes.map((message) => message.params),
        [['newHeads']],
      )
      const numbers = new Set(clients.map((client) => client.heads[0]?.number))
      assert.equal(numbers.size, 1, 'every client got the same block')
    } finally {
      for (const client of clients) client.socket.close()
    }
  })

  it('cutting the upstream WebSocket while blocks are mined: every block once, in order, with its logs', async () => {
    const clients = await Promise.all([1, 2, 3].map(() => subscriber(url(), node.fixtures.demo)))
    // proof that the clients' subscriptions are live: an empty block is announced to each (a block
    // mined before the head feed has its first head only anchors it, unannounced: then another)
    await untilAnnounced(
      async () => {
        await rpc('evm_mine')
        return Number(await rpc('eth_blockNumber'))
      },
      (block) => clients.every((client) => client.heads.some((head) => Number(head.number) === block)),
    )
    const subscribesBefore = proxy.sent.filter((message) => message.method === 'eth_subscribe').length
    const subscribesSince = () =>
      proxy.sent.filter((message) => message.method === 'eth_subscribe').length - subscribesBefore
    const first = Number(await rpc('eth_blockNumber')) + 1
    let cuts = 0
    /** Blocks mined while the gateway had no upstream subscription: cut, and not yet made again. */
    let minedWhileCut = 0
    for (let index = 0; index < 30; index++) {
      // cut a live connection (8 and 19); between the cuts, blocks also come while it is back (14 on)
      if (index === 8 || index === 14 || index === 19) {
        await until(
          () => proxy.connectionCount() > 0 && subscribesSince() === cuts,
          'the upstream subscription to be made again',
        )
      }
      if (index === 8 || index === 19) {
        proxy.cut(400)
        cuts++
      }
      await increment()
      if (subscribesSince() < cuts) minedWhileCut++
    }
    assert.ok(minedWhileCut > 0, 'blocks were mined while the upstream subscription was cut')
    const last = Number(await rpc('eth_blockNumber'))
    assert.equal(last, first + 29)
    // one more block, after the 30: the feed announces heads and logs in order, so once every client
    // has this one's head and log, any duplicate of an earlier block would have come before it
    await increment()
    const expected = Array.from({ length: 31 }, (_, index) => first + index)
    await until(() =>
      clients.every(
        (client) =>
          client.heads.some((head) => Number(head.number) === last + 1) &&
          client.logs.some((log) => Number(log.blockNumber) === last + 1),
      ),
    )
    for (const client of clients) {
      assert.deepEqual(
        client.heads.map((head) => Number(head.number)).filter((number) => number >= first),
        expected,
      )
      assert.deepEqual(
        client.logs.map((log) => Number(log.blockNumber)),
        expected,
      )
      assert.ok(client.logs.every((log) => log.removed === false))
      client.socket.close()
    }
    // the heads of the blocks mined while it was cut may come by polling, before the socket is back
    await until(() => subscribesSince() >= cuts, 'the upstream subscription to be made again')
    const subscribes = proxy.sent
      .filter((message) => message.method === 'eth_subscribe')
      .slice(subscribesBefore)
    assert.equal(
      subscribes.length,
      2,
      'the one upstream subscription was made again after each of the two cuts',
    )
  })

  it('a reorg: newHeads announces the new chain, logs of dropped blocks come again with removed: true', async () => {
    const client = await subscriber(url(), node.fixtures.demo)
    const base = Number(await rpc('eth_blockNumber'))
    const snapshot = await rpc('evm_snapshot')
    for (let index = 0; index < 3; index++) await increment()
    await until(() => client.heads.length === 3 && client.logs.length === 3)
    const dropped = client.logs.map((log) => log.blockHash)

    await rpc('evm_revert', [snapshot])
    await rpc('anvil_mine', ['0x1'])
    for (let index = 0; index < 3; index++) await increment()
    await until(() => client.heads.length === 7 && client.logs.length === 9)

    assert.deepEqual(
      client.heads.map((head) => Number(head.number) - base),
      [1, 2, 3, 1, 2, 3, 4],
    )
    const removed = client.logs.slice(3, 6)
    assert.ok(removed.every((log) => log.removed === true))
    assert.deepEqual(
      removed.map((log) => log.blockHash),
      [...dropped].reverse(),
    )
    const fresh = client.logs.slice(6)
    assert.deepEqual(
      fresh.map((log) => Number(log.blockNumber) - base),
      [2, 3, 4],
    )
    assert.ok(fresh.every((log) => log.removed === false && !dropped.includes(log.blockHash)))
    client.socket.close()
  })
})
