import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { feeHistoryFromBlocks } from './feeHistoryFromBlocks.ts'

const gwei = 1_000_000_000n
const gasLimit = 30_000_000n
const hex = (value: bigint | number) => `0x${value.toString(16)}`

type Tx = { gasPrice?: string; maxFeePerGas?: string; maxPriorityFeePerGas?: string; gasUsed: bigint }

function rpcBlock(
  number: number,
  baseFee: bigint,
  txs: Tx[],
  gasUsed = txs.reduce((sum, tx) => sum + tx.gasUsed, 0n),
) {
  return {
    number: hex(number),
    baseFeePerGas: hex(baseFee),
    gasUsed: hex(gasUsed),
    gasLimit: hex(gasLimit),
    transactions: txs.map(({ gasUsed: _, ...tx }) => tx),
    receipts: txs.map((tx) => ({ gasUsed: hex(tx.gasUsed) })),
  }
}

type RpcBlock = ReturnType<typeof rpcBlock>

/**
 * A pool that answers batches of eth_getBlockByNumber / eth_getBlockReceipts from `blocks`, in
 * reverse order (a node may answer a batch in any order), recording every batch it was sent.
 */
function stubPool(blocks: RpcBlock[]) {
  const byNumber = new Map(blocks.map((block) => [block.number, block]))
  const batches: { method: string; params: unknown[] }[][] = []
  const pool = {
    async send(body: string): Promise<Buffer> {
      const calls = JSON.parse(body) as { id: number; method: string; params: [string, boolean?] }[]
      batches.push(calls.map(({ method, params }) => ({ method, params })))
      const answers = calls.map((call) => {
        const block = byNumber.get(call.params[0])
        if (!block) return { jsonrpc: '2.0', id: call.id, result: null }
        const { receipts, ...rest } = block
        return {
          jsonrpc: '2.0',
          id: call.id,
          result: call.method === 'eth_getBlockReceipts' ? receipts : rest,
        }
      })
      return Buffer.from(JSON.stringify(answers.reverse()))
    },
  }
  return { pool, batches }
}

const legacy = (gasPrice: bigint, gasUsed: bigint): Tx => ({ gasPrice: hex(gasPrice), gasUsed })
const eip1559 = (maxFee: bigint, tip: bigint, gasUsed: bigint): Tx => ({
  maxFeePerGas: hex(maxFee),
  maxPriorityFeePerGas: hex(tip),
  gasUsed,
})

describe('feeHistoryFromBlocks', () => {
  it('rewards: effective tips at 0/10/20/30/100% of the block gas, smallest tip first', async () => {
    // base fee 10 Gwei. Effective tips: 5 (room 20 - 10 = 10 > 5), 1 (legacy 11 - 10), 2 (room 12 - 10 = 2 < 3)
    const block = rpcBlock(16, 10n * gwei, [
      eip1559(20n * gwei, 5n * gwei, 29_000n),
      legacy(11n * gwei, 21_000n),
      eip1559(12n * gwei, 3n * gwei, 50_000n),
    ])
    const { pool } = stubPool([block])
    const history = await feeHistoryFromBlocks(pool, 16, 16)
    // by tip: 1 (21,000 gas; cumulative 21,000), 2 (71,000), 5 (100,000). Thresholds 0, 10,000 and
    // 20,000 are within the first; 30,000 needs the second; 100,000 the third
    assert.deepEqual(history.reward, [[1n, 1n, 1n, 2n, 5n].map((tip) => hex(tip * gwei))])
    assert.equal(history.oldestBlock, '0x10')
    assert.deepEqual(history.gasUsedRatio, [100_000 / 30_000_000])
  })

  it('empty blocks: zero tips and ratio 0, and no receipts asked for', async () => {
    const { pool, batches } = stubPool([rpcBlock(5, 8n * gwei, []), rpcBlock(6, 7n * gwei, [])])
    const history = await feeHistoryFromBlocks(pool, 5, 6)
    assert.deepEqual(history.reward, [
      ['0x0', '0x0', '0x0', '0x0', '0x0'],
      ['0x0', '0x0', '0x0', '0x0', '0x0'],
    ])
    assert.deepEqual(history.gasUsedRatio, [0, 0])
    assert.deepEqual(
      batches.flat().map((call) => call.method),
      ['eth_getBlockByNumber', 'eth_getBlockByNumber'],
    )
  })

  describe('base fees: each block own, then the next block by EIP-1559', () => {
    const next = async (block: RpcBlock) => {
      const history = await feeHistoryFromBlocks(
        stubPool([block]).pool,
        Number(block.number),
        Number(block.number),
      )
      assert.equal(history.baseFeePerGas[0], block.baseFeePerGas)
      assert.equal(history.baseFeePerGas.length, 2)
      return history.baseFeePerGas[1]
    }

    it('gas used at the target (half the limit): unchanged', async () => {
      assert.equal(await next(rpcBlock(1, 10n * gwei, [], 15_000_000n)), hex(10n * gwei))
    })

    it('a full block: up by an eighth', async () => {
      assert.equal(await next(rpcBlock(1, 10n * gwei, [], 30_000_000n)), hex(11_250_000_000n))
    })

    it('an empty block: down by an eighth', async () => {
      assert.equal(await next(rpcBlock(1, 8n * gwei, [], 0n)), hex(7n * gwei))
    })

    it('below the target: down in proportion, rounding each division down', async () => {
      // 10^10 x 14,900,000 / 15,000,000 = 9,933,333,333 (rounded down); / 8 = 1,241,666,666
      assert.equal(await next(rpcBlock(1, 10n * gwei, [], 100_000n)), hex(8_758_333_334n))
    })

    it('just above the target: up by at least 1 wei', async () => {
      // 7 x 1 / 15,000,000 / 8 rounds to 0; the increase is at least 1
      assert.equal(await next(rpcBlock(1, 7n, [], 15_000_001n)), hex(8n))
    })

    it('over several blocks, the next base fee follows the last one', async () => {
      const { pool } = stubPool([rpcBlock(1, 3n * gwei, [], 30_000_000n), rpcBlock(2, 8n * gwei, [], 0n)])
      const history = await feeHistoryFromBlocks(pool, 1, 2)
      assert.deepEqual(history.baseFeePerGas, [hex(3n * gwei), hex(8n * gwei), hex(7n * gwei)])
    })
  })

  it('asks for blocks in batches of 100', async () => {
    const blocks = Array.from({ length: 150 }, (_, index) => rpcBlock(index + 1, gwei, []))
    const { pool, batches } = stubPool(blocks)
    const history = await feeHistoryFromBlocks(pool, 1, 150)
    assert.deepEqual(
      batches.map((batch) => batch.length),
      [100, 50],
    )
    assert.deepEqual(
      batches.flat().map((call) => call.params[0]),
      blocks.map((block) => block.number),
    )
    assert.equal(history.gasUsedRatio.length, 150)
  })

  it('a block the node does not have fails the whole range', async () => {
    const { pool } = stubPool([rpcBlock(1, gwei, [])])
    await assert.rejects(feeHistoryFromBlocks(pool, 1, 2), /block data for 2 unavailable/)
  })
})
