import type { FeeWindow } from './createFeeIndexer.ts'
import type { FeeBlock } from './feeHistoryStore.ts'
import { rewardPercentiles } from './feeHistoryStore.ts'
import { formatGwei } from './formatGwei.ts'

/**
 * The gas endpoints' arithmetic (COMPAT.md §5), in integer wei, formatted as Gwei at the end.
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

export type SuggestedGasFees = ReturnType<typeof suggestedGasFees>

export function suggestedGasFees(window: FeeWindow) {
  const { blocks, nextBaseFee } = window
  const latest = blocks[blocks.length - 1] as FeeBlock
  const level = (settings: (typeof levels)[keyof typeof levels]) => {
    const median = medianTip(blocks.slice(-5), settings.percentile)
    const adjusted = (median * settings.tipPercent) / 100n
    // the floors apply where the chain's fees reach them; a cheap devnet keeps its own tips
    const tip = latest.baseFee >= settings.floor && adjusted < settings.floor ? settings.floor : adjusted
    const maxFee = (latest.baseFee * settings.basePercent) / 100n + tip
    return {
      suggestedMaxPriorityFeePerGas: formatGwei(tip),
      suggestedMaxFeePerGas: formatGwei(maxFee),
      minWaitTimeEstimate: settings.minWait,
      maxWaitTimeEstimate: settings.maxWait,
    }
  }
  const recent = blocks.slice(-200)
  const withTips = recent.filter((block) => block.gasUsedRatio > 0)
  const at = (p: number) => rewardPercentiles.indexOf(p as (typeof rewardPercentiles)[number])
  const latestTips = latest.gasUsedRatio > 0 ? latest.rewards : rewardPercentiles.map(() => 0n)
  const below = blocks.filter((block) => block.baseFee <= latest.baseFee).length
  const recentTip = medianTip(blocks.slice(-5), 20)
  const olderTip = medianTip(blocks.slice(-10, -5), 20)
  return {
    low: level(levels.low),
    medium: level(levels.medium),
    high: level(levels.high),
    estimatedBaseFee: formatGwei(nextBaseFee),
    networkCongestion: Math.round((below / blocks.length) * 10_000) / 10_000,
    latestPriorityFeeRange: [formatGwei(latestTips[at(0)] ?? 0n), formatGwei(latestTips[at(100)] ?? 0n)],
    historicalPriorityFeeRange: [
      formatGwei(min(withTips.map((block) => block.rewards[at(0)] ?? 0n))),
      formatGwei(max(withTips.map((block) => block.rewards[at(100)] ?? 0n))),
    ],
    historicalBaseFeeRange: [
      formatGwei(min(recent.map((block) => block.baseFee))),
      formatGwei(max(recent.map((block) => block.baseFee))),
    ],
    priorityFeeTrend: trend(recentTip, olderTip),
    baseFeeTrend: trend(nextBaseFee, latest.baseFee),
  }
}

/** The median (lower middle) of the blocks' tips at `percentile`; blocks without transactions carry no tips. */
function medianTip(blocks: readonly FeeBlock[], percentile: number): bigint {
  const index = rewardPercentiles.indexOf(percentile as (typeof rewardPercentiles)[number])
  const tips = blocks
    .filter((block) => block.gasUsedRatio > 0)
    .map((block) => block.rewards[index] ?? 0n)
    .sort(compare)
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
