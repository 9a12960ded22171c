import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import { encodeFunctionData, formatGwei } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { FeeWindow } from '../src/gas/createFeeIndexer.ts'
import type { HeadEvent } from '../src/networks/createHeadChain.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const chainId = 31337
const hex = (number: number) => `0x${number.toString(16)}`
const increment = encodeFunctionData({ abi: demoAbi, functionName: 'increment' })

/** The node's own chain as the fee window holds it: each block's base fee and gas used ratio, block 0 first. */
type NodeChain = { head: number; baseFees: bigint[]; ratios: number[] }

/**
 * Two gateways on one Postgres schema in front of one anvil: the first holds the fee indexer's lease
 * and polls the head only when the test says (so the store keeps what the chain left for as long as
 * the test wants), the second follows it, polling the head every 100 ms. Once the follower's own
 * head tracker announces a rewind or a reorg, its fee window and its Gas API never show a block the
 * chain left, and they come back to the chain's own fees when the leader has indexed them.
 */
describe('fee indexer followers on Postgres follow rewinds and reorgs (docs/operations.md)', () => {
  let node: TestNode
  let schema: TestSchema
  let leader: TestGateway
  let follower: TestGateway

  const rpc = (method: string, params: unknown[] = []) => nodeRpc(node, method, params)
  const networkOf = (gateway: TestGateway) =>
    gateway.app.networks.all.find((network) => network.name === 'devnet') as Network
  const windowOf = (gateway: TestGateway): FeeWindow | undefined =>
    gateway.app.indexers.get(chainId)?.window()
  const headNumber = async () => Number(await rpc('eth_blockNumber'))

  /** The node's chain now as its blocks have it (its whole length fits the window). */
  const nodeBlocks = async (): Promise<NodeChain> => {
    const head = await headNumber()
    const blocks = (await Promise.all(
      Array.from({ length: head + 1 }, (_, number) => rpc('eth_getBlockByNumber', [hex(number), false])),
    )) as { baseFeePerGas: string; gasUsed: string; gasLimit: string }[]
    return {
      head,
      baseFees: blocks.map((block) => BigInt(block.baseFeePerGas)),
      ratios: blocks.map((block) => Number(block.gasUsed) / Number(block.gasLimit)),
    }
  }
  /** The node's eth_feeHistory of its blocks up to `head`. */
  const nodeFeeHistory = async (head: number) => {
    const history = (await rpc('eth_feeHistory', [hex(head + 1), hex(head), []])) as {
      baseFeePerGas: string[]
      gasUsedRatio: number[]
    }
    return {
      baseFees: history.baseFeePerGas.slice(0, head + 1).map((fee) => BigInt(fee)),
      ratios: history.gasUsedRatio,
    }
  }
  /**
   * The node's chain now (its whole length fits the window), once its eth_feeHistory, which the
   * leader indexes, agrees with its blocks: anvil answers eth_feeHistory from a cache that a task of
   * its own fills from its new blocks after it has answered evm_mine or anvil_reorg, so just after a
   * reorg (or new blocks at numbers a rollback freed) it can still give the old branch's fees for the
   * newest blocks of the new one. Taken before the leader looks at the node, so that it indexes the
   * chain's own fees too.
   */
  const nodeChain = async (): Promise<NodeChain> => {
    let chain: NodeChain | undefined
    await until(async () => {
      chain = await nodeBlocks()
      const history = await nodeFeeHistory(chain.head)
      return isDeepStrictEqual(history, { baseFees: chain.baseFees, ratios: chain.ratios })
    }, "the node's fee history agreeing with its blocks")
    return chain as NodeChain
  }
  const baseFeeHistory = async (gateway: TestGateway) => {
    const answer = await fetch(`${gateway.url}/v3/${gateway.key}/networks/${chainId}/baseFeeHistory`)
    return answer.status === 200 ? ((await answer.json()) as string[]) : undefined
  }

  /**
   * One look at the follower: every block of its window, and every base fee its Gas API answers, is
   * the chain's (`chain`) at that number; none above the chain's head.
   */
  const assertOnChain = async (chain: NodeChain, what: string) => {
    const window = windowOf(follower)
    for (const block of window?.blocks ?? []) {
      assert.ok(block.number <= chain.head, `${what}: block ${block.number} above the head ${chain.head}`)
      assert.equal(block.baseFee, chain.baseFees[block.number], `${what}: the base fee of ${block.number}`)
      assert.equal(block.gasUsedRatio, chain.ratios[block.number], `${what}: the gas used of ${block.number}`)
    }
    const history = await baseFeeHistory(follower)
    if (history === undefined) return
    assert.ok(
      history.length <= chain.head + 1,
      `${what}: ${history.length} base fees for ${chain.head + 1} blocks`,
    )
    assert.deepEqual(
      history,
      chain.baseFees.slice(0, history.length).map((fee) => formatGwei(fee)),
      `${what}: the Gas API's base fees`,
    )
  }

  /** Both gateways' windows at the node's head, the chain's own. */
  const bothAtHead = async (what: string) => {
    const chain = await nodeChain()
    await networkOf(leader).heads.poll()
    await until(() => windowOf(leader)?.head === chain.head, `the leader at ${chain.head}: ${what}`)
    await until(() => windowOf(follower)?.head === chain.head, `the follower at ${chain.head}: ${what}`)
    await assertOnChain(chain, what)
    assert.deepEqual(windowOf(follower)?.blocks, windowOf(leader)?.blocks)
  }

  /**
   * Runs `change` on the node and waits for the follower's own tracker to announce the fork it makes;
   * then looks at the follower again and again (at least 20 looks, more than one of its reads of the
   * store) while the leader has not heard of it, then lets the leader catch up, looking on until the
   * follower has the chain's new fees.
   */
  const followFork = async (change: () => Promise<void>, what: string) => {
    const events: HeadEvent[] = []
    const stop = networkOf(follower).heads.subscribe((event) => events.push(event))
    try {
      await change()
      const chain = await nodeChain()
      await until(
        () => events.some((event) => event.kind === 'fork'),
        `the follower's tracker announcing ${what}`,
      )
      const fork = events.find((event) => event.kind === 'fork') as Extract<HeadEvent, { kind: 'fork' }>
      let looks = 0
      await until(async () => {
        await assertOnChain(chain, `${what}, the leader unaware`)
        return ++looks >= 20
      }, `looks at the follower during ${what}`)
      assert.ok(
        (windowOf(leader)?.head ?? 0) >= Number(fork.before),
        "the leader's window still ends at the old head: the store holds what the chain left",
      )
      await networkOf(leader).heads.poll()
      await until(async () => {
        await assertOnChain(chain, `${what}, the leader catching up`)
        return windowOf(follower)?.head === chain.head
      }, `the follower at the chain's new head after ${what}`)
      await bothAtHead(what)
    } finally {
      stop()
    }
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    const config = (headPollMs: number) => ({
      storage: { postgres: schema.url },
      gas: { enabled: true, windowBlocks: 1024, historyBlocks: 1024 },
      upstreams: { headPollMs },
    })
    leader = await startTestGateway({ upstreams: [node.url], config: config(600_000) })
    await until(() => windowOf(leader) !== undefined, 'the leader indexing')
    follower = await startTestGateway({ upstreams: [node.url], config: config(100) })
    await until(() => windowOf(follower) !== undefined, 'the follower reading the store')
  })
  after(async () => {
    await follower?.close()
    await leader?.close()
    await schema?.drop()
    await node?.stop()
  })

  it('the follower serves the window the leader stores', async () => {
    for (let i = 0; i < 3; i++) await rpc('evm_mine')
    await bothAtHead('three new blocks')
  })

  it('a rollback: from the fork event on, the follower shows no block above the new head', async () => {
    for (let i = 0; i < 4; i++) await rpc('evm_mine')
    await bothAtHead('four new blocks')
    await followFork(async () => {
      await rpc('anvil_rollback', [3])
    }, 'a rollback of 3')
  })

  it("a reorg: from the fork event on, the follower shows none of the old branch's blocks", async () => {
    for (let i = 0; i < 4; i++) await rpc('evm_mine')
    await bothAtHead('four empty blocks')
    const sender = node.fixtures.accounts[3] as string
    const depth = 3
    // the new branch's blocks each carry a transaction: their gas used tells them from the old, empty ones
    const transactions = Array.from({ length: depth }, (_, offset) => [
      { from: sender, to: node.fixtures.demo, data: increment },
      offset,
    ])
    await followFork(async () => {
      await rpc('anvil_reorg', [depth, transactions])
    }, 'a reorg of 3')
  })
})
