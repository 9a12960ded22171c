import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTcpProxy, type TcpProxy } from './helpers/startTcpProxy.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'

/** Each way between the instances and Redis: a Redis on another host of a busy network. */
const redisDelayMs = 5
/** New blocks the client must see go by (anvil mines one a second). */
const blocksToSee = 3

const blockNumber = async (gateway: TestGateway) => {
  const answer = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'))
  assert.equal(answer.status, 200, answer.text)
  return Number((answer.json as { result: string }).result)
}

describe('eth_blockNumber never goes backwards for a client bouncing between three instances', () => {
  let node: TestNode
  let lagging: FakeUpstream
  let proxy: TcpProxy
  let prefix: TestPrefix
  let gateways: TestGateway[] = []

  before(async () => {
    node = await startTestNode({ loadBlocks: 3 })
    // the third instance's node is stuck at block 1: it can only answer higher from the shared head
    lagging = await startFakeUpstream({
      kind: 'rewrite',
      target: node.url,
      respond: (request) => (request.method === 'eth_blockNumber' ? '0x1' : undefined),
    })
    proxy = await startTcpProxy(6379, { delayMs: redisDelayMs })
    prefix = createTestPrefix()
    const config = {
      redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix.keyPrefix },
      // roomy: a busy machine must not turn a slow raise into a failed one (shown as by one instance)
      cache: { shared: { waitMs: 2_000 } },
    }
    gateways = [
      await startTestGateway({ upstreams: [node.url], config }),
      await startTestGateway({ upstreams: [node.url], config }),
      await startTestGateway({ upstreams: [lagging.url], config }),
    ]
    await nodeRpc(node, 'evm_setIntervalMining', [1])
  })
  after(async () => {
    for (const gateway of gateways) await gateway.close()
    await lagging?.close()
    await proxy?.close()
    await node?.stop()
    await prefix?.remove()
  })

  it('the numbers seen, asking each instance in turn while blocks are mined, never decrease', async () => {
    const [first, second, stuck] = gateways as [TestGateway, TestGateway, TestGateway]
    const start = await blockNumber(first)
    let highest = start
    let asked = 0
    // the instances that find a new block answer it first; the client goes straight to the one
    // that cannot find it, as a load balancer may send it
    const order = [first, stuck, second, stuck]
    while (highest < start + blocksToSee) {
      assert.ok(asked < 100_000, `the chain did not move past ${highest}`)
      const gateway = order[asked % order.length] as TestGateway
      const number = await blockNumber(gateway)
      asked++
      assert.ok(
        number >= highest,
        `${number} after ${highest} (call ${asked}, instance ${gateways.indexOf(gateway)})`,
      )
      highest = number
    }
    // the stuck node says 0x1: the third instance answered higher only from the shared head
    assert.ok(highest > 1)
  })
})
