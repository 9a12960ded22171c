import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { startWsProxy, type WsProxy } from './helpers/startWsProxy.ts'
import { until } from './helpers/until.ts'
import { untilAnnounced } from './helpers/untilAnnounced.ts'

type Head = Record<string, unknown> & { hash: string; number: string }

/** A raw newHeads subscriber: every notification it was sent, by block hash. */
async function subscribeHeads(url: string) {
  const socket = new WebSocket(url)
  const heads = new Map<string, Head>()
  let id: unknown
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString())
    if (message.id === 1) id = message.result
    else if (message.method === 'eth_subscription' && message.params.subscription === id) {
      heads.set(message.params.result.hash, message.params.result)
    }
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  await until(() => id !== undefined, 'the subscription id')
  return { socket, heads }
}

describe('newHeads: the notifications the node itself sends', () => {
  let node: TestNode
  let proxy: WsProxy
  let overSocket: TestGateway
  let polling: TestGateway
  let fromNode: Awaited<ReturnType<typeof subscribeHeads>>

  const rpc = (method: string, params: unknown[] = []) => nodeRpc(node, method, params)
  const increment = () => mineIncrement(node)
  const latestHash = async () => ((await rpc('eth_getBlockByNumber', ['latest', false])) as Head).hash
  const wsUrl = (gateway: TestGateway) => `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`

  /**
   * Subscribes to the gateway and mines until the subscription hears a block: from then on the
   * gateway's head feed is running (its first head only anchors the chain), so no block is missed.
   */
  async function subscribeLive(gateway: TestGateway) {
    const client = await subscribeHeads(wsUrl(gateway))
    await untilAnnounced(
      async () => {
        await rpc('anvil_mine', ['0x1'])
        return latestHash()
      },
      (mined) => client.heads.has(mined),
    )
    return client
  }

  /** Waits for both subscribers to have heard of each block, then compares the two objects. */
  async function assertSameHeads(client: { heads: Map<string, Head> }, hashes: string[]) {
    await until(
      () => hashes.every((hash) => client.heads.has(hash) && fromNode.heads.has(hash)),
      'both subscriptions to hear every block',
    )
    for (const hash of hashes) assert.deepEqual(client.heads.get(hash), fromNode.heads.get(hash))
  }

  /** Mines a block with a transaction (and a log), then two empty ones at once; their hashes. */
  async function mineBlocks(): Promise<string[]> {
    const withTransaction = await increment()
    await rpc('anvil_mine', ['0x2'])
    const last = (await rpc('eth_getBlockByNumber', ['latest', false])) as Head & { parentHash: string }
    return [withTransaction, last.parentHash, last.hash]
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    proxy = await startWsProxy(node.wsUrl)
    overSocket = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url, ws: proxy.url }] }],
      },
    })
    // no upstream WebSocket: the gateway polls for the latest block and fetches every head it announces
    polling = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        upstreams: { headPollMs: 100 },
      },
    })
    fromNode = await subscribeHeads(node.wsUrl)
  })
  after(async () => {
    fromNode?.socket.terminate()
    await overSocket?.close()
    await polling?.close()
    await proxy?.close()
    await node?.stop()
  })

  it("over the upstream's WebSocket: each notification is the node's own object, every field kept", async () => {
    const client = await subscribeLive(overSocket)
    try {
      const hashes = await mineBlocks()
      await assertSameHeads(client, hashes)
      const withTransaction = client.heads.get(hashes[0] as string)
      assert.equal((withTransaction?.transactions as unknown[] | undefined)?.length, 1)
      assert.deepEqual(withTransaction?.uncles, [])
    } finally {
      client.socket.close()
    }
  })

  it('blocks mined while the upstream WebSocket was down are fetched, and sent as the node sends them', async () => {
    const client = await subscribeLive(overSocket)
    try {
      proxy.cut(1_000)
      const hashes = await mineBlocks()
      assert.equal(proxy.connectionCount(), 0, 'the blocks were mined with no upstream subscription')
      await assertSameHeads(client, hashes)
    } finally {
      client.socket.close()
    }
  })

  it('polling (no upstream WebSocket): every head is a fetched block, sent as the node sends it', async () => {
    const client = await subscribeLive(polling)
    try {
      await assertSameHeads(client, await mineBlocks())
    } finally {
      client.socket.close()
    }
  })
})
