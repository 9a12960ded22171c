import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type CountingProxy, startCountingProxy } from './helpers/startCountingProxy.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

// The cache's rule for answers pinned to a block (a number above finalized, a mined transaction): kept
// while that block stays on the chain, whatever new heads come, and dropped when a reorg leaves it.
// Counted at the node (a counting proxy between the gateways and anvil): a kept answer costs no call.

type Call = [method: string, params: unknown[]]

const counter = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })
const increment = encodeFunctionData({ abi: demoAbi, functionName: 'increment' })
const hex = (number: number) => `0x${number.toString(16)}`
const networkOf = (gateway: TestGateway): Network => gateway.app.networks.all[0] as Network
/**
 * The calls counted at the node: state calls and receipts (none of them the gateways' own background
 * work), and logs up to a block with a log: a range whose last block has none cannot show which
 * branch the node answered from, so it is kept only until the next head.
 */
const countedMethods = ['eth_call', 'eth_getTransactionReceipt']

describe('answers kept while their block stays on the chain', () => {
  let node: TestNode
  let proxy: CountingProxy

  const rpc = (method: string, params: unknown[] = []) => nodeRpc(node, method, params)
  const viaNode = async (method: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(method, params))).json
  const via = async (gateway: TestGateway, [method, params]: Call) =>
    (await postJson(gateway.endpoint, rpcBody(method, params))).json
  const headNumber = async () => Number(await rpc('eth_blockNumber'))
  const hashOf = async (number: number) =>
    ((await rpc('eth_getBlockByNumber', [hex(number), false])) as { hash: string }).hash

  /** The calls pinned to block `number`: state, the block, logs up to it. */
  const pinnedTo = (number: number): Call[] => [
    ['eth_call', [{ to: node.fixtures.demo, data: counter }, hex(number)]],
    ['eth_getBlockByNumber', [hex(number), false]],
    ['eth_getLogs', [{ fromBlock: hex(number - 2), toBlock: hex(number), address: node.fixtures.demo }]],
  ]

  /** Node calls of the counted kinds while `work` runs (the calls are made one at a time). */
  async function nodeCallsDuring(work: () => Promise<void>, logsUpTo: number[] = []): Promise<number> {
    const markers = [
      ...countedMethods.map((method) => `"${method}"`),
      ...logsUpTo.map((number) => `"toBlock":"${hex(number)}"`),
    ]
    const tallies = markers.map((marker) => proxy.watch(marker))
    await work()
    return tallies.reduce((sum, tally) => sum + tally.sent, 0)
  }

  /** Each call through `gateway`, its answer the node's. */
  async function sameAsNode(gateway: TestGateway, calls: Call[]): Promise<void> {
    for (const call of calls) {
      const [theirs, own] = [await via(gateway, call), await viaNode(...call)]
      assert.deepEqual(theirs, own, `${call[0]} ${JSON.stringify(call[1])}`)
    }
  }

  /** Until every gateway's chain has the node's block at its head (a reorg's new branch included). */
  async function untilFollowed(gateways: TestGateway[]): Promise<void> {
    const head = await headNumber()
    const hash = await hashOf(head)
    await until(
      () => gateways.every((gateway) => networkOf(gateway).head.hashAt(BigInt(head)) === hash),
      'the gateways to follow the node',
    )
  }

  /** `count` blocks, each with an increment (a log); the transactions' hashes by block number. */
  async function mineIncrements(count: number): Promise<Map<number, string>> {
    const mined = new Map<number, string>()
    for (let index = 0; index < count; index++) {
      const hash = (await rpc('eth_sendTransaction', [
        { from: node.fixtures.accounts[2], to: node.fixtures.demo, data: increment },
      ])) as string
      let receipt: { blockNumber: string } | null = null
      await until(async () => {
        receipt = (await rpc('eth_getTransactionReceipt', [hash])) as { blockNumber: string } | null
        return receipt !== null
      }, 'the receipt')
      mined.set(Number((receipt as unknown as { blockNumber: string }).blockNumber), hash)
    }
    return mined
  }

  /**
   * A reorg of `depth` blocks checked against the cache's rule: answers pinned to blocks around the
   * fork are kept across new heads; after the reorg, those of blocks still on the chain are still
   * kept (no node call) when the fork is above finalized, and those of the blocks it left are never
   * served again: every answer is the node's.
   */
  async function checkReorg(gateways: TestGateway[], depth: number): Promise<void> {
    const [first, ...others] = gateways as [TestGateway, ...TestGateway[]]
    const mined = await mineIncrements(Math.min(depth, 4) + 3)
    const head = await headNumber()
    const fork = head - depth + 1
    const numbers = depth <= 10 ? range(fork - 3, head) : [fork - 3, fork - 2, fork - 1, fork, fork + 1, head]
    const callsOf = (blocks: number[]): Call[] => [
      ...blocks.flatMap(pinnedTo),
      ...[...mined]
        .filter(([number]) => blocks.includes(number))
        .map(([, hash]): Call => ['eth_getTransactionReceipt', [hash]]),
    ]
    const hashesBefore = new Map<number, string>()
    for (const number of numbers) hashesBefore.set(number, await hashOf(number))
    await untilFollowed(gateways)
    await sameAsNode(first, callsOf(numbers))

    // new heads come: nothing pinned to a block still on the chain is asked again, on any instance
    await rpc('anvil_mine', ['0x2'])
    await untilFollowed(gateways)
    const withLogs = (blocks: number[]) => blocks.filter((number) => mined.has(number))
    const afterHeads = await nodeCallsDuring(async () => {
      for (const gateway of gateways) await sameAsNode(gateway, callsOf(numbers))
    }, withLogs(numbers))
    assert.equal(afterHeads, 0, 'answers pinned to blocks on the chain are kept across new heads')

    const finalized = networkOf(first).head.finalized() ?? -1n
    await rpc('anvil_reorg', [
      depth + 2,
      [[{ from: node.fixtures.accounts[3], to: node.fixtures.demo, data: increment }, 0]],
    ])
    await untilFollowed(gateways)
    // a new block can be the old one again (empty, same parent and time): it stays on the chain
    const stayed: number[] = []
    const left: number[] = []
    for (const number of numbers)
      (hashesBefore.get(number) === (await hashOf(number)) ? stayed : left).push(number)
    assert.ok(left.includes(head), `the reorg left the head it forked under: ${left}`)
    assert.ok(
      [...mined.keys()].some((number) => left.includes(number)),
      'a mined transaction in a block left',
    )
    // the blocks still on the chain: kept (while above finalized: a reorg past it drops every answer)
    const keptCalls = callsOf(stayed)
    const afterReorg = await nodeCallsDuring(() => sameAsNode(first, keptCalls), withLogs(stayed))
    if (BigInt(fork) > finalized) assert.equal(afterReorg, 0, 'answers of blocks still on the chain are kept')
    // the blocks left: never served again, asked of the node
    const leftCalls = callsOf(left)
    for (const call of leftCalls) {
      const [method, params] = call
      const asked = proxy.watch(`"${method}"`)
      await sameAsNode(first, [call])
      // the blocks themselves are the new branch's (sameAsNode), whoever fetched them
      if (method !== 'eth_getBlockByNumber')
        assert.ok(asked.sent >= 1, `${method} ${JSON.stringify(params)}: asked of the node again`)
    }
    for (const gateway of others) await sameAsNode(gateway, [...keptCalls, ...leftCalls])
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 240 })
    proxy = await startCountingProxy(node.url)
  })
  after(async () => {
    await proxy?.close()
    await node?.stop()
  })

  describe('one instance', () => {
    let gateway: TestGateway
    before(async () => {
      gateway = await startTestGateway({ config: configOver(node, proxy) })
    })
    after(() => gateway?.close())

    for (const depth of [1, 10, 150]) {
      it(`a reorg ${depth} deep`, () => checkReorg([gateway], depth))
    }

    it('what the head model knows is its answer: eth_blockNumber, and the latest block as its poll fetched it', async () => {
      // HTTP only: every head is heard from a poll, whose block is the latest block's answer
      const polling = await startTestGateway({
        config: {
          networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: proxy.url }] }],
          upstreams: { headPollMs: 200 },
        },
      })
      try {
        const cache = networkOf(polling).cache
        assert.ok(cache)
        await rpc('anvil_mine', ['0x1'])
        await untilFollowed([polling])
        const head = await headNumber()
        const { hits, misses } = cache.stats
        const numbers = proxy.watch('"eth_blockNumber"')
        const answer = (await via(polling, ['eth_blockNumber', []])) as { result: unknown }
        assert.equal(answer.result, hex(head))
        assert.equal(numbers.sent, 0, 'no node asked')
        await sameAsNode(polling, [
          ['eth_getBlockByNumber', ['latest', false]],
          ['eth_getBlockByNumber', [hex(head), false]],
        ])
        assert.deepEqual([cache.stats.hits - hits, cache.stats.misses - misses], [2, 0])
      } finally {
        await polling.close()
      }
    })
  })

  describe('two instances sharing Redis', () => {
    let prefix: TestPrefix
    let gateways: TestGateway[] = []
    before(async () => {
      prefix = createTestPrefix()
      const shared = {
        ...configOver(node, proxy),
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        // roomy: these tests are about what is shared, and a busy machine can be slow
        cache: { shared: { waitMs: 2_000 } },
      }
      gateways = [await startTestGateway({ config: shared }), await startTestGateway({ config: shared })]
    })
    after(async () => {
      for (const gateway of gateways) await gateway.close()
      await prefix?.remove()
    })

    for (const depth of [1, 10, 150]) {
      it(`a reorg ${depth} deep`, () => checkReorg(gateways, depth))
    }
  })
})

/** The gateway's devnet through the counting proxy, its heads from the node's WebSocket and polls. */
function configOver(node: TestNode, proxy: CountingProxy): Record<string, unknown> {
  return {
    networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: proxy.url, ws: node.wsUrl }] }],
    upstreams: { headPollMs: 200 },
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index)
}
