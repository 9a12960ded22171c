import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { rewardPercentiles } from './feeHistoryStore.ts'

/** eth_feeHistory's answer shape (quantities as hex). */
export type FeeHistory = {
  oldestBlock: string
  baseFeePerGas: string[]
  gasUsedRatio: number[]
  reward?: string[][]
}

type Tx = { gasPrice?: string; maxFeePerGas?: string; maxPriorityFeePerGas?: string }
type Block = { number: string; baseFeePerGas: string; gasUsed: string; gasLimit: string; transactions: Tx[] }
type Receipt = { gasUsed: string }

/** Blocks fetched per batch request. */
const batchSize = 100

/**
 * eth_feeHistory computed the way geth does from the blocks themselves (and their receipts, for
 * blocks with transactions), for nodes that keep fee history only for recent blocks. Rewards are
 * the effective tips at `rewardPercentiles` of the block's gas, smallest tip first.
 */
export async function feeHistoryFromBlocks(
  pool: Pick<UpstreamPool, 'send'>,
  from: number,
  to: number,
): Promise<FeeHistory> {
  const blocks: Block[] = []
  for (let start = from; start <= to; start += batchSize) {
    const end = Math.min(to, start + batchSize - 1)
    const calls = []
    for (let number = start; number <= end; number++) {
      calls.push({
        jsonrpc: '2.0',
        id: number,
        method: 'eth_getBlockByNumber',
        params: [`0x${number.toString(16)}`, true],
      })
    }
    blocks.push(...(await batch<Block>(pool, calls)))
  }
  const withTxs = blocks.filter((block) => block.transactions.length > 0)
  const receipts = new Map<string, Receipt[]>()
  for (let start = 0; start < withTxs.length; start += batchSize) {
    const calls = withTxs.slice(start, start + batchSize).map((block) => ({
      jsonrpc: '2.0',
      id: Number(block.number),
      method: 'eth_getBlockReceipts',
      params: [block.number],
    }))
    const answers = await batch<Receipt[]>(pool, calls)
    answers.forEach((answer, index) => {
      receipts.set((withTxs[start + index] as Block).number, answer)
    })
  }
  const next = blocks[blocks.length - 1] as Block
  return {
    oldestBlock: `0x${from.toString(16)}`,
    baseFeePerGas: [...blocks.map((block) => block.baseFeePerGas), nextBaseFee(next)],
    gasUsedRatio: blocks.map((block) => Number(BigInt(block.gasUsed)) / Number(BigInt(block.gasLimit))),
    reward: blocks.map((block) => rewards(block, receipts.get(block.number) ?? [])),
  }
}

function rewards(block: Block, receipts: Receipt[]): string[] {
  if (block.transactions.length === 0) return rewardPercentiles.map(() => '0x0')
  const baseFee = BigInt(block.baseFeePerGas)
  const sorted = block.transactions
    .map((tx, index) => ({ tip: effectiveTip(tx, baseFee), gasUsed: BigInt(receipts[index]?.gasUsed ?? 0) }))
    .sort((a, b) => (a.tip < b.tip ? -1 : a.tip > b.tip ? 1 : 0))
  const gasUsed = Number(BigInt(block.gasUsed))
  let index = 0
  let sum = (sorted[0] as { gasUsed: bigint }).gasUsed
  return rewardPercentiles.map((percentile) => {
    const threshold = BigInt(Math.floor((gasUsed * percentile) / 100))
    while (sum < threshold && index < sorted.length - 1) {
      index++
      sum += (sorted[index] as { gasUsed: bigint }).gasUsed
    }
    return `0x${(sorted[index] as { tip: bigint }).tip.toString(16)}`
  })
}

function effectiveTip(tx: Tx, baseFee: bigint): bigint {
  if (tx.maxFeePerGas !== undefined && tx.maxPriorityFeePerGas !== undefined) {
    const tip = BigInt(tx.maxPriorityFeePerGas)
    const room = BigInt(tx.maxFeePerGas) - baseFee
    return tip < room ? tip : room
  }
  return BigInt(tx.gasPrice ?? 0) - baseFee
}

/** EIP-1559: the base fee of the block after `block`. */
function nextBaseFee(block: Block): string {
  const baseFee = BigInt(block.baseFeePerGas)
  const gasUsed = BigInt(block.gasUsed)
  const target = BigInt(block.gasLimit) / 2n
  if (gasUsed === target) return block.baseFeePerGas
  if (gasUsed > target) {
    const delta = (baseFee * (gasUsed - target)) / target / 8n
    return `0x${(baseFee + (delta > 1n ? delta : 1n)).toString(16)}`
  }
  return `0x${(baseFee - (baseFee * (target - gasUsed)) / target / 8n).toString(16)}`
}

async function batch<T>(pool: Pick<UpstreamPool, 'send'>, calls: { id: number }[]): Promise<T[]> {
  const answers = JSON.parse((await pool.send(JSON.stringify(calls), { retry: true })).toString()) as {
    id: number
    result?: T
    error?: { message?: string }
  }[]
  const byId = new Map(answers.map((answer) => [answer.id, answer]))
  return calls.map((call) => {
    const answer = byId.get(call.id)
    if (!answer || answer.error || answer.result == null) {
      throw new Error(`block data for ${call.id} unavailable: ${answer?.error?.message ?? 'no answer'}`)
    }
    return answer.result
  })
}
