import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { baseFeeHistory, baseFeePercentile, suggestedGasFees } from './computeGasFees.ts'
import type { FeeWindow } from './createFeeIndexer.ts'
import type { FeeBlock } from './feeHistoryStore.ts'

const gwei = 1_000_000_000n
/** Thousandths of a Gwei, so hand-written figures stay exact. */
const milli = 1_000_000n

/** A block with transactions and these tips at the 0/10/20/30/100th percentiles. */
function tipped(baseFee: bigint, tips: [bigint, bigint, bigint, bigint, bigint]): Omit<FeeBlock, 'number'> {
  return { baseFee, gasUsedRatio: 0.4, rewards: tips }
}

/** A block without transactions (eth_feeHistory reports zero tips for it). */
function empty(baseFee: bigint): Omit<FeeBlock, 'number'> {
  return { baseFee, gasUsedRatio: 0, rewards: [0n, 0n, 0n, 0n, 0n] }
}

/** Blocks numbered from 0, in the order given. */
function numbered(blocks: Omit<FeeBlock, 'number'>[]): FeeBlock[] {
  return blocks.map((block, number) => ({ number, ...block }))
}

function feeWindow(
  blocks: Omit<FeeBlock, 'number'>[],
  nextBaseFee: bigint,
  nodePriorityFee: bigint | undefined = undefined,
): FeeWindow {
  return { head: blocks.length - 1, blocks: numbered(blocks), nextBaseFee, nodePriorityFee }
}

const tipsOf = (fees: ReturnType<typeof suggestedGasFees>) => [
  fees.low.suggestedMaxPriorityFeePerGas,
  fees.medium.suggestedMaxPriorityFeePerGas,
  fees.high.suggestedMaxPriorityFeePerGas,
]

const maxFeesOf = (fees: ReturnType<typeof suggestedGasFees>) => [
  fees.low.suggestedMaxFeePerGas,
  fees.medium.suggestedMaxFeePerGas,
  fees.high.suggestedMaxFeePerGas,
]

describe('baseFeePercentile', () => {
  const withBaseFees = (fees: bigint[]) => numbered(fees.map(empty))

  it('one block: element floor(1 * p) - 1 is negative, so element 0', () => {
    assert.equal(baseFeePercentile(withBaseFees([7n]), 0.5), 7n)
    assert.equal(baseFeePercentile(withBaseFees([7n]), 0.9), 7n)
  })

  it('two blocks: floor(2 * 0.5) - 1 = 0 and floor(2 * 0.9) - 1 = 0, the smaller one both times', () => {
    assert.equal(baseFeePercentile(withBaseFees([9n, 3n]), 0.5), 3n)
    assert.equal(baseFeePercentile(withBaseFees([9n, 3n]), 0.9), 3n)
  })

  it('three blocks: p=0.5 gives element 0, p=0.9 element floor(2.7) - 1 = 1', () => {
    assert.equal(baseFeePercentile(withBaseFees([3n, 1n, 2n]), 0.5), 1n)
    assert.equal(baseFeePercentile(withBaseFees([3n, 1n, 2n]), 0.9), 2n)
  })

  it('ten blocks in any order: sorted ascending, elements 4 and 8', () => {
    const fees = [6n, 10n, 1n, 8n, 3n, 9n, 2n, 7n, 5n, 4n].map((fee) => fee * gwei)
    assert.equal(baseFeePercentile(withBaseFees(fees), 0.5), 5n * gwei)
    assert.equal(baseFeePercentile(withBaseFees(fees), 0.9), 9n * gwei)
  })

  it('sorts as integers, not as text or doubles', () => {
    const big = 2n ** 60n
    // as text "10" < "9"; as doubles 2^60 and 2^60 + 1 are equal
    const fees = [big + 1n, 10n, big, 9n]
    assert.equal(baseFeePercentile(withBaseFees(fees), 0.5), 10n)
    assert.equal(baseFeePercentile(withBaseFees(fees), 0.9), big)
  })

  it('an empty window gives 0', () => {
    assert.equal(baseFeePercentile([], 0.5), 0n)
  })
})

describe('baseFeeHistory', () => {
  it('the last `count` base fees as Gwei, oldest first', () => {
    const blocks = numbered([1n, 2n, 3n, 4n].map((fee) => empty(fee * gwei + 250n * milli)))
    assert.deepEqual(baseFeeHistory(blocks, 2), ['3.25', '4.25'])
    assert.deepEqual(baseFeeHistory(blocks, 500), ['1.25', '2.25', '3.25', '4.25'])
  })
})

describe('suggestedGasFees', () => {
  /** Below every floor, so tips are what the blocks say. */
  const cheap = 500n * milli

  it('tips come from the last 5 blocks with transactions, however many empty blocks follow them', () => {
    const blocks = [
      // two older blocks with transactions and high tips: not among the last 5
      tipped(cheap, [100n * gwei, 100n * gwei, 100n * gwei, 100n * gwei, 100n * gwei]),
      tipped(cheap, [100n * gwei, 100n * gwei, 100n * gwei, 100n * gwei, 100n * gwei]),
      // the last 5, each followed by an empty block; 10th / 20th / 30th percentiles
      tipped(cheap, [1n * gwei, 5n * gwei, 2n * gwei, 9n * gwei, 12n * gwei]),
      empty(cheap),
      tipped(cheap, [1n * gwei, 1n * gwei, 6n * gwei, 3n * gwei, 12n * gwei]),
      empty(cheap),
      tipped(cheap, [1n * gwei, 4n * gwei, 4n * gwei, 7n * gwei, 12n * gwei]),
      empty(cheap),
      tipped(cheap, [1n * gwei, 2n * gwei, 10n * gwei, 5n * gwei, 12n * gwei]),
      empty(cheap),
      tipped(cheap, [500n * milli, 3n * gwei, 8n * gwei, 11n * gwei, 13n * gwei]),
      // more empty blocks than the 200 the ranges span
      ...Array.from({ length: 250 }, () => empty(cheap)),
    ]
    const fees = suggestedGasFees(feeWindow(blocks, cheap - 1n, 42n))
    // medians: 10th of [5,1,4,2,3] = 3; 20th of [2,6,4,10,8] = 6; 30th of [9,3,7,5,11] = 7 (Gwei)
    // times 94 / 97 / 98 %: 2.82, 5.82, 6.86; no floors (the latest base fee is 0.5 Gwei)
    assert.deepEqual(tipsOf(fees), ['2.82', '5.82', '6.86'])
    // 0.5 x 1.10 / 1.20 / 1.25 = 0.55 / 0.6 / 0.625, plus the tip
    assert.deepEqual(maxFeesOf(fees), ['3.37', '6.42', '7.485'])
    // the last block with transactions, and all 7 (fewer than 200)
    assert.deepEqual(fees.latestPriorityFeeRange, ['0.5', '13'])
    assert.deepEqual(fees.historicalPriorityFeeRange, ['0.5', '100'])
    // 20th percentile: median 6 of the last 5 against median 100 of the 2 before
    assert.equal(fees.priorityFeeTrend, 'down')
  })

  it('an even number of blocks with transactions takes the lower middle', () => {
    const blocks = [
      tipped(cheap, [0n, 4n * gwei, 4n * gwei, 4n * gwei, 4n * gwei]),
      tipped(cheap, [0n, 1n * gwei, 1n * gwei, 1n * gwei, 1n * gwei]),
      tipped(cheap, [0n, 3n * gwei, 3n * gwei, 3n * gwei, 3n * gwei]),
      tipped(cheap, [0n, 2n * gwei, 2n * gwei, 2n * gwei, 2n * gwei]),
      empty(cheap),
    ]
    const fees = suggestedGasFees(feeWindow(blocks, cheap))
    // median of [1,2,3,4] is 2 Gwei: 1.88, 1.94, 1.96
    assert.deepEqual(tipsOf(fees), ['1.88', '1.94', '1.96'])
  })

  it('a block with transactions whose tips are 0 counts (its tips are 0, not unknown)', () => {
    const blocks = [
      tipped(cheap, [2n * gwei, 2n * gwei, 2n * gwei, 2n * gwei, 2n * gwei]),
      tipped(cheap, [0n, 0n, 0n, 0n, 0n]),
      tipped(cheap, [0n, 0n, 0n, 0n, 0n]),
    ]
    const fees = suggestedGasFees(feeWindow(blocks, cheap, 7n * gwei))
    assert.deepEqual(tipsOf(fees), ['0', '0', '0'])
    assert.deepEqual(fees.latestPriorityFeeRange, ['0', '0'])
    assert.deepEqual(fees.historicalPriorityFeeRange, ['0', '2'])
  })

  it('no block with transactions: the node eth_maxPriorityFeePerGas for every tip and range', () => {
    const blocks = Array.from({ length: 300 }, () => empty(cheap))
    const fees = suggestedGasFees(feeWindow(blocks, cheap, 1n * gwei))
    assert.deepEqual(tipsOf(fees), ['1', '1', '1'])
    assert.deepEqual(maxFeesOf(fees), ['1.55', '1.6', '1.625'])
    assert.deepEqual(fees.latestPriorityFeeRange, ['1', '1'])
    assert.deepEqual(fees.historicalPriorityFeeRange, ['1', '1'])
    assert.equal(fees.priorityFeeTrend, 'level')
  })

  it('no block with transactions and a node without eth_maxPriorityFeePerGas: 0', () => {
    const fees = suggestedGasFees(feeWindow([empty(cheap), empty(cheap)], cheap, undefined))
    assert.deepEqual(tipsOf(fees), ['0', '0', '0'])
    assert.deepEqual(fees.latestPriorityFeeRange, ['0', '0'])
  })

  it('the floors apply to the node suggestion too, where the latest base fee reaches them', () => {
    // latest base fee 1.6 Gwei: the 1 and 1.5 Gwei floors apply, the 2 Gwei one does not
    const fees = suggestedGasFees(feeWindow([empty(1_600n * milli)], 1_400n * milli, 1n * gwei))
    assert.deepEqual(tipsOf(fees), ['1', '1.5', '1'])
    // 1.6 x 1.10 / 1.20 / 1.25 = 1.76 / 1.92 / 2, plus the tip
    assert.deepEqual(maxFeesOf(fees), ['2.76', '3.42', '3'])
  })

  describe('floors', () => {
    const smallTips = (baseFee: bigint) =>
      tipped(baseFee, [0n, 100n * milli, 100n * milli, 100n * milli, 100n * milli])

    it('none while the latest base fee is below 1 Gwei, whatever the older base fees were', () => {
      const fees = suggestedGasFees(feeWindow([smallTips(50n * gwei), smallTips(999n * milli)], cheap))
      // 0.1 Gwei x 94 / 97 / 98 %
      assert.deepEqual(tipsOf(fees), ['0.094', '0.097', '0.098'])
    })

    it('at exactly 1 Gwei only the low floor applies', () => {
      const fees = suggestedGasFees(feeWindow([smallTips(1n * gwei)], cheap))
      assert.deepEqual(tipsOf(fees), ['1', '0.097', '0.098'])
    })

    it('at 2 Gwei all three apply', () => {
      const fees = suggestedGasFees(feeWindow([smallTips(2n * gwei)], cheap))
      assert.deepEqual(tipsOf(fees), ['1', '1.5', '2'])
      // 2 x 1.10 / 1.20 / 1.25 = 2.2 / 2.4 / 2.5, plus the floored tip
      assert.deepEqual(maxFeesOf(fees), ['3.2', '3.9', '4.5'])
    })

    it('a tip above its floor is kept', () => {
      const fees = suggestedGasFees(
        feeWindow([tipped(30n * gwei, [0n, 5n * gwei, 5n * gwei, 5n * gwei, 0n])], cheap),
      )
      assert.deepEqual(tipsOf(fees), ['4.7', '4.85', '4.9'])
    })
  })

  it('historical ranges span 200 blocks: tips the last 200 with transactions, base fees the last 200 blocks', () => {
    const range = [1n * gwei, 1n * gwei, 1n * gwei, 1n * gwei, 2n * gwei] as [
      bigint,
      bigint,
      bigint,
      bigint,
      bigint,
    ]
    const outlier = [1n, 1n, 1n, 1n, 900n * gwei] as [bigint, bigint, bigint, bigint, bigint]
    // 201 blocks with transactions: the first (the outlier, base fee 90 Gwei) is out of both ranges
    const blocks = [
      tipped(90n * gwei, outlier),
      ...Array.from({ length: 200 }, (_, index) => tipped(BigInt(index + 1) * gwei, range)),
    ]
    const fees = suggestedGasFees(feeWindow(blocks, cheap))
    assert.deepEqual(fees.historicalPriorityFeeRange, ['1', '2'])
    assert.deepEqual(fees.historicalBaseFeeRange, ['1', '200'])

    // 200 with transactions among more blocks: the outlier is the 200th, in the tip range, while the
    // empty blocks after it push it out of the base fee range
    const spaced = [
      tipped(90n * gwei, outlier),
      ...Array.from({ length: 199 }, () => tipped(cheap, range)),
      empty(cheap),
    ]
    const spacedFees = suggestedGasFees(feeWindow(spaced, cheap))
    assert.deepEqual(spacedFees.historicalPriorityFeeRange, ['0.000000001', '900'])
    assert.deepEqual(spacedFees.historicalBaseFeeRange, ['0.5', '0.5'])
  })

  describe('priorityFeeTrend: the median 20th-percentile tip of the last 5 blocks with transactions against the 5 before', () => {
    const withTip20 = (tip: bigint) => tipped(cheap, [0n, 0n, tip, 0n, 0n])

    it('up, with empty blocks between the two groups', () => {
      const blocks = [
        ...[1n, 1n, 1n, 1n, 1n].map((tip) => withTip20(tip * gwei)),
        empty(cheap),
        empty(cheap),
        ...[2n, 2n, 2n, 2n, 2n].map((tip) => withTip20(tip * gwei)),
        empty(cheap),
      ]
      assert.equal(suggestedGasFees(feeWindow(blocks, cheap)).priorityFeeTrend, 'up')
    })

    it('only the 5 before count: an older 11th block does not', () => {
      // the 5 before: median of [2,2,5,5,5] is 5, as the last 5's; with the 11th, [1,2,2,5,5,5] would give 2
      const blocks = [
        withTip20(1n * gwei),
        ...[2n, 5n, 2n, 5n, 5n].map((tip) => withTip20(tip * gwei)),
        ...[5n, 5n, 5n, 5n, 5n].map((tip) => withTip20(tip * gwei)),
      ]
      assert.equal(suggestedGasFees(feeWindow(blocks, cheap)).priorityFeeTrend, 'level')
    })

    it('level when no block with transactions comes before the last 5', () => {
      const blocks = [empty(cheap), ...[1n, 9n, 9n, 9n, 9n].map((tip) => withTip20(tip * gwei))]
      assert.equal(suggestedGasFees(feeWindow(blocks, cheap)).priorityFeeTrend, 'level')
    })

    it('down against fewer than 5 before', () => {
      const blocks = [withTip20(4n * gwei), ...[3n, 3n, 3n, 3n, 3n].map((tip) => withTip20(tip * gwei))]
      assert.equal(suggestedGasFees(feeWindow(blocks, cheap)).priorityFeeTrend, 'down')
    })
  })

  it('estimatedBaseFee is the next base fee; baseFeeTrend compares it with the latest', () => {
    const up = suggestedGasFees(feeWindow([empty(cheap)], cheap + 1n))
    assert.equal(up.estimatedBaseFee, '0.500000001')
    assert.equal(up.baseFeeTrend, 'up')
    assert.equal(suggestedGasFees(feeWindow([empty(cheap)], cheap - 1n)).baseFeeTrend, 'down')
    assert.equal(suggestedGasFees(feeWindow([empty(cheap)], cheap)).baseFeeTrend, 'level')
  })

  it('networkCongestion: the share of the window at or below the latest base fee, to 4 decimals', () => {
    // 1 and 2 of [1, 5, 2] are at or below 2: 2/3
    const twoThirds = suggestedGasFees(feeWindow([empty(1n), empty(5n), empty(2n)], 2n))
    assert.equal(twoThirds.networkCongestion, 0.6667)
    assert.equal(suggestedGasFees(feeWindow([empty(2n), empty(2n), empty(2n)], 2n)).networkCongestion, 1)
    // the cheapest of 8: 1/8
    const lowest = [8n, 7n, 6n, 5n, 4n, 3n, 2n, 1n].map((fee) => empty(fee))
    assert.equal(suggestedGasFees(feeWindow(lowest, 1n)).networkCongestion, 0.125)
  })

  it('wait times are fixed per level', () => {
    const fees = suggestedGasFees(feeWindow([empty(cheap)], cheap))
    assert.deepEqual(
      [fees.low, fees.medium, fees.high].map((level) => [
        level.minWaitTimeEstimate,
        level.maxWaitTimeEstimate,
      ]),
      [
        [15_000, 30_000],
        [15_000, 45_000],
        [15_000, 60_000],
      ],
    )
  })
})
