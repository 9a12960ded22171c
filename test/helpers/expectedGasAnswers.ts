import { formatGwei } from 'viem'
import { postJson, rpcBody } from './postJson.ts'

export type NodeFees = {
  baseFees: bigint[]
  tips: bigint[][]
  ratios: number[]
  next: bigint
  /** The node's eth_maxPriorityFeePerGas. */
  nodeTip: bigint
}

/**
 * The node's own fee data, read independently of the gateway: base fees from the blocks, tips at
 * 0/10/20/30/100% from the node's eth_feeHistory, the next base fee from its pending entry, and
 * its eth_maxPriorityFeePerGas.
 */
export async function readNodeFees(url: string): Promise<NodeFees> {
  const rpc = async (body: unknown) => (await postJson(url, body)).json
  const head = Number(((await rpc(rpcBody('eth_blockNumber'))) as { result: string }).result)
  const baseFees: bigint[] = []
  for (let from = 0; from <= head; from += 500) {
    const batch = []
    for (let number = from; number <= Math.min(head, from + 499); number++) {
      batch.push(rpcBody('eth_getBlockByNumber', [`0x${number.toString(16)}`, false], number))
    }
    const blocks = (await rpc(batch)) as { id: number; result: { baseFeePerGas: string } }[]
    blocks.sort((a, b) => a.id - b.id)
    for (const block of blocks) baseFees.push(BigInt(block.result.baseFeePerGas))
  }
  const tips: bigint[][] = []
  const ratios: number[] = []
  let next = 0n
  for (let to = head; to >= 0; to -= 1024) {
    const count = Math.min(1024, to + 1)
    const history = (
      (await rpc(
        rpcBody('eth_feeHistory', [`0x${count.toString(16)}`, `0x${to.toString(16)}`, [0, 10, 20, 30, 100]]),
      )) as {
        result: { reward: string[][]; gasUsedRatio: number[]; baseFeePerGas: string[] }
      }
    ).result
    if (to === head) next = BigInt(history.baseFeePerGas[count] as string)
    tips.unshift(...history.reward.map((row) => row.map(BigInt)))
    ratios.unshift(...history.gasUsedRatio)
  }
  const nodeTip = BigInt(((await rpc(rpcBody('eth_maxPriorityFeePerGas'))) as { result: string }).result)
  return { baseFees, tips, ratios, next, nodeTip }
}

/**
 * docs/compatibility.md §5, written out again from its text, with docs/api.md's choices: tips come from the
 * blocks that carry transactions (gas used > 0), counted back through the whole chain (the last 5
 * for the levels and the trend's recent side, the 5 before those for its older side, the last 1
 * and 200 for the ranges); a chain with none suggests the node's eth_maxPriorityFeePerGas.
 */
export function expectedGasAnswers(fees: NodeFees) {
  const n = fees.baseFees.length
  const sorted = [...fees.baseFees].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const percentile = (p: number) => sorted[Math.max(0, Math.floor(n * p) - 1)] as bigint
  const latest = fees.baseFees[n - 1] as bigint
  const withTxs = fees.ratios.flatMap((ratio, index) => (ratio > 0 ? [index] : []))
  const tipAt = (index: number, column: number) => fees.tips[index]?.[column] as bigint
  const median = (values: bigint[]) => {
    const ordered = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    return ordered[Math.floor((ordered.length - 1) / 2)] as bigint
  }
  const lastFive = withTxs.slice(-5)
  const level = (column: number, tipPercent: bigint, basePercent: bigint, floor: bigint, maxWait: number) => {
    let tip =
      lastFive.length > 0
        ? (median(lastFive.map((index) => tipAt(index, column))) * tipPercent) / 100n
        : fees.nodeTip
    if (latest >= floor && tip < floor) tip = floor
    return {
      suggestedMaxPriorityFeePerGas: formatGwei(tip),
      suggestedMaxFeePerGas: formatGwei((latest * basePercent) / 100n + tip),
      minWaitTimeEstimate: 15_000,
      maxWaitTimeEstimate: maxWait,
    }
  }
  const trend = (now: bigint, before: bigint) => (now > before ? 'up' : now < before ? 'down' : 'level')
  const minOf = (values: bigint[]) => values.reduce((a, b) => (b < a ? b : a))
  const maxOf = (values: bigint[]) => values.reduce((a, b) => (b > a ? b : a))
  const tipRange = (indexes: number[]) =>
    indexes.length > 0
      ? [
          formatGwei(minOf(indexes.map((index) => tipAt(index, 0)))),
          formatGwei(maxOf(indexes.map((index) => tipAt(index, 4)))),
        ]
      : [formatGwei(fees.nodeTip), formatGwei(fees.nodeTip)]
  const fiveBefore = withTxs.slice(-10, -5)
  const last200BaseFees = fees.baseFees.slice(-200)
  return {
    baseFeePercentile: { baseFeePercentile: formatGwei(percentile(0.5)) },
    busyThreshold: { busyThreshold: formatGwei(percentile(0.9)) },
    baseFeeHistory: fees.baseFees.slice(-500).map((fee) => formatGwei(fee)),
    suggestedGasFees: {
      low: level(1, 94n, 110n, 1_000_000_000n, 30_000),
      medium: level(2, 97n, 120n, 1_500_000_000n, 45_000),
      high: level(3, 98n, 125n, 2_000_000_000n, 60_000),
      estimatedBaseFee: formatGwei(fees.next),
      networkCongestion:
        Math.round((fees.baseFees.filter((fee) => fee <= latest).length / n) * 10_000) / 10_000,
      latestPriorityFeeRange: tipRange(withTxs.slice(-1)),
      historicalPriorityFeeRange: tipRange(withTxs.slice(-200)),
      historicalBaseFeeRange: [formatGwei(minOf(last200BaseFees)), formatGwei(maxOf(last200BaseFees))],
      priorityFeeTrend:
        fiveBefore.length > 0
          ? trend(
              median(lastFive.map((index) => tipAt(index, 2))),
              median(fiveBefore.map((index) => tipAt(index, 2))),
            )
          : 'level',
      baseFeeTrend: trend(fees.next, latest),
    },
  }
}
