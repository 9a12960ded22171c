import { baseFeePercentile, suggestedGasFees } from '../gas/computeGasFees.ts'
import type { FeeIndexer, FeeWindow } from '../gas/createFeeIndexer.ts'
import { formatGwei } from '../gas/formatGwei.ts'

/** The most points a base-fee chart gets: a window of 20,000 blocks is drawn as means of ranges. */
const maxPoints = 600

/** Computed once per window (a new head), however often the page asks. */
const views = new WeakMap<FeeWindow, ReturnType<typeof toWindowView>>()

/** The dashboard's gas page for one chain: the suggested fees and the stored window's base fees. */
export function toGasView(indexer: FeeIndexer) {
  const status = indexer.status()
  const window = status === 'ready' ? indexer.window() : undefined
  let view = window && views.get(window)
  if (window && !view) {
    view = toWindowView(window)
    views.set(window, view)
  }
  return { chainId: indexer.chainId, network: indexer.network.name, status, ...(view ?? { window: null }) }
}

function toWindowView(window: FeeWindow) {
  const { blocks } = window
  const perPoint = Math.max(1, Math.ceil(blocks.length / maxPoints))
  const history: { block: number; baseFeeGwei: number }[] = []
  for (let start = 0; start < blocks.length; start += perPoint) {
    const range = blocks.slice(start, start + perPoint)
    const sum = range.reduce((total, block) => total + block.baseFee, 0n)
    const last = range[range.length - 1]
    if (last)
      history.push({ block: last.number, baseFeeGwei: Number(formatGwei(sum / BigInt(range.length))) })
  }
  return {
    window: {
      head: window.head,
      blocks: blocks.length,
      blocksPerPoint: perPoint,
      p50Gwei: formatGwei(baseFeePercentile(blocks, 0.5)),
      p90Gwei: formatGwei(baseFeePercentile(blocks, 0.9)),
      nextBaseFeeGwei: formatGwei(window.nextBaseFee),
      history,
    },
    suggestedGasFees: suggestedGasFees(window),
  }
}
