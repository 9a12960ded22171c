import type { FeeWindow } from './createFeeIndexer.ts'
import type { FeeBlock } from './feeHistoryStore.ts'
import { hasTransactions, rewardPercentiles } from './feeHistoryStore.ts'
import { formatGwei } from './formatGwei.ts'

/**
 * The gas endpoints' arithmetic (docs/compatibility.md §5), in integer wei, formatted as Gwei at the end.
 * Pure: the same window gives the same answers.
 */

const gwei = 1_000_000_000n

/** Sorted ascending, element floor(n * p) - 1 (element 0 when that is negative). */
export function baseFeePercentile(blocks: readonly FeeBlock[], p: number): bigint {
  const sorted = blocks.map((block) => block.baseFee).sort(compare)
  const index = Math.max(0, Math.floor(sorted.length * p) - 1)
  return sorted[index] ?? 0n
}

export function baseFeeHistory(blocks: readonly FeeBlock[], count: number): string[] {
  return blocks.slice(-count).map((block) => formatGwei(block.baseFee))
}

const levels = {
  low: { percentile: 10, tipPercent: 94n, basePercent: 110n, floor: gwei, minWait: 15_000, maxWait: 30_000 },
  medium: {
    percentile: 20,
    tipPercent: 97n,
    basePercent: 120n,
    floor: (gwei * 3n) / 2n,
    minWait: 15_000,
    maxWait: 45_000,
  },
  high: {
    percentile: 30,
    tipPercent: 98n,
    basePercent: 125n,
    floor: 2n * gwei,
    minWait: 15_000,
    maxWait: 60_000,
  },
} as const

/** Blocks with transactions that the tip figures look back over (docs/compatibility.md §5's "5" and "200" blocks). */
const percentileBlocks = 5
const rangeBlocks = 200

export type SuggestedGasFees = ReturnType<typeof suggestedGasFees>

/**
 * Every tip figure comes from blocks that carry transactions (an empty block has no tips), found
 * back through the whole window however many empty blocks lie between:
 * - low/medium/high: the last 5 such blocks;
 * - latestPriorityFeeRange: the last one; historicalPriorityFeeRange: the last 200;
 * - priorityFeeTrend: the last 5 against the 5 before them ("level" when there are none before them).
 * A window without any falls back to the node's eth_maxPriorityFeePerGas (0 when the node lacks it):
 * it is every level's tip (not scaled, the floors still apply) and both ends of both ranges, with
 * the trend "level".
 */
export function suggestedGasFees(window: FeeWindow) {
  const { blocks, nextBaseFee } = window
  const latest = blocks[blocks.length - 1] as FeeBlock
  const tipped = lastWithTransactions(blocks, rangeBlocks)
  const recent = tipped.slice(-percentileBlocks)
  const nodeTip = window.nodePriorityFee ?? 0n
  const level = (settings: (typeof levels)[keyof typeof levels]) => {
    const tip =
      recent.length > 0 ? (medianTip(recent, settings.percentile) * settings.tipPercent) / 100n : nodeTip
    // the floors apply where the chain's fees reach them; a cheap devnet keeps its own tips
    const floored = latest.baseFee >= settings.floor && tip < settings.floor ? settings.floor : tip
    const maxFee = (latest.baseFee * settings.basePercent) / 100n + floored
    return {
      suggestedMaxPriorityFeePerGas: formatGwei(floored),
      suggestedMaxFeePerGas: formatGwei(maxFee),
      minWaitTimeEstimate: settings.minWait,
      maxWaitTimeEstimate: settings.maxWait,
    }
  }
  const tipRange = (from: readonly FeeBlock[]) =>
    from.length > 0
      ? [
          formatGwei(min(from.map((block) => tipAt(block, 0)))),
          formatGwei(max(from.map((block) => tipAt(block, 100)))),
        ]
      : [formatGwei(nodeTip), formatGwei(nodeTip)]
  const older = tipped.slice(-2 * percentileBlocks, -percentileBlocks)
  const baseFees = blocks.slice(-rangeBlocks).map((block) => block.baseFee)
  const below = blocks.filter((block) => block.baseFee <= latest.baseFee).length
  return {
    low: level(levels.low),
    medium: level(levels.medium),
    high: level(levels.high),
    estimatedBaseFee: formatGwei(nextBaseFee),
    networkCongestion: Math.round((below / blocks.length) * 10_000) / 10_000,
    latestPriorityFeeRange: tipRange(tipped.slice(-1)),
    historicalPriorityFeeRange: tipRange(tipped),
    historicalBaseFeeRange: [formatGwei(min(baseFees)), formatGwei(max(baseFees))],
    priorityFeeTrend: older.length > 0 ? trend(medianTip(recent, 20), medianTip(older, 20)) : 'level',
    baseFeeTrend: trend(nextBaseFee, latest.baseFee),
  }
}

/** The last `count` blocks (or fewer) that carry transactions, oldest first, from anywhere in `blocks`. */
function lastWithTransactions(blocks: readonly FeeBlock[], count: number): FeeBlock[] {
  const found: FeeBlock[] = []
  for (let index = blocks.length - 1; index >= 0 && found.length < count; index--) {
    const block = blocks[index] as FeeBlock
    if (hasTransactions(block)) found.push(block)
  }
  return found.reverse()
}

function tipAt(block: FeeBlock, percentile: (typeof rewardPercentiles)[number]): bigint {
  return block.rewards[rewardPercentiles.indexOf(percentile)] ?? 0n
}

/** The median (lower middle) of the blocks' tips at `percentile`. */
function medianTip(blocks: readonly FeeBlock[], percentile: (typeof rewardPercentiles)[number]): bigint {
  const tips = blocks.map((block) => tipAt(block, percentile)).sort(compare)
  return tips[Math.floor((tips.length - 1) / 2)] ?? 0n
}

function trend(now: bigint, before: bigint): 'up' | 'down' | 'level' {
  return now > before ? 'up' : now < before ? 'down' : 'level'
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function min(values: bigint[]): bigint {
  return values.reduce((a, b) => (b < a ? b : a), values[0] ?? 0n)
}

function max(values: bigint[]): bigint {
  return values.reduce((a, b) => (b > a ? b : a), values[0] ?? 0n)
}
