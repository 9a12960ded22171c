import assert from 'node:assert/strict'
import { toHex } from 'viem'
import { hardhatMaxTxGas, startHardhatNode } from './startHardhatNode.ts'
import { nodeRpc, startTestNode, type TestNode } from './startTestNode.ts'

/** A node implementation the differential tests compare the gateway with, and its own dev methods. */
export type NodeImplementation = {
  name: string
  start(): Promise<TestNode>
  /** How many blocks `safe` and `finalized` are below `latest` on this node. */
  safeDepth: number
  finalizedDepth: number
  mine(node: TestNode, blocks: number): Promise<void>
  /**
   * Marks the head; the answer replaces the blocks mined after the mark (at least one) with as many new
   * ones at the same heights.
   */
  markFork(node: TestNode): Promise<() => Promise<void>>
  /** Whether the node reads a missing block argument as `latest` (the gateway refuses it). */
  acceptsMissingBlock: boolean
  /** The node's answer to an `eth_call` with gas one past EIP-7825's cap (2^24), when it refuses it. */
  txGasCapRefusal?: unknown
}

/** anvil and Hardhat's node, each with what it does differently (recorded from the node itself). */
export const nodeImplementations: NodeImplementation[] = [
  {
    name: 'anvil',
    start: () => startTestNode({ loadBlocks: 20 }),
    safeDepth: 32,
    finalizedDepth: 64,
    acceptsMissingBlock: false,
    mine: async (node, blocks) => {
      await nodeRpc(node, 'anvil_mine', [toHex(blocks)])
    },
    markFork: async (node) => {
      const mark = BigInt((await nodeRpc(node, 'eth_blockNumber')) as string)
      return async () => {
        const depth = BigInt((await nodeRpc(node, 'eth_blockNumber')) as string) - mark
        await nodeRpc(node, 'anvil_reorg', [Number(depth), []])
      }
    },
  },
  {
    // Hardhat 3.18 (EDR 0.22), whose default hardfork enforces EIP-7825. It has no reorg method: a
    // snapshot, reverted to, then new blocks a minute later
    name: 'Hardhat',
    start: () => startHardhatNode({ loadBlocks: 20 }),
    safeDepth: 0,
    finalizedDepth: 0,
    acceptsMissingBlock: true,
    txGasCapRefusal: {
      code: -32000,
      message: `transaction gas limit (${hardhatMaxTxGas + 1}) is greater than the cap (${hardhatMaxTxGas})`,
      data: {
        message: `transaction gas limit (${hardhatMaxTxGas + 1}) is greater than the cap (${hardhatMaxTxGas})`,
      },
    },
    mine: async (node, blocks) => {
      await nodeRpc(node, 'hardhat_mine', [toHex(blocks)])
    },
    markFork: async (node) => {
      const mark = BigInt((await nodeRpc(node, 'eth_blockNumber')) as string)
      const snapshot = await nodeRpc(node, 'evm_snapshot')
      return async () => {
        const depth = BigInt((await nodeRpc(node, 'eth_blockNumber')) as string) - mark
        assert.equal(await nodeRpc(node, 'evm_revert', [snapshot]), true)
        await nodeRpc(node, 'evm_increaseTime', [60])
        await nodeRpc(node, 'hardhat_mine', [toHex(depth)])
      }
    },
  },
]
