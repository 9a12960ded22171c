import { createHash } from 'node:crypto'
import type { Network } from '../networks/createNetwork.ts'

/**
 * How long a learned width holds: then a query wider than it is asked whole again, and learns it anew.
 * @internal exported for its tests
 */
export const learnedLimitMs = 10 * 60_000

/**
 * The most filters whose width is kept per network: past it, the oldest learned goes.
 * @internal exported for its tests
 */
export const maxLearnedFilters = 256

/** A width in blocks, and until when it holds (`untilMs`, on the clock of splitLogsRange). */
type Learned = { blocks: bigint; untilMs: number }

const widths = new WeakMap<Network, LogsWidths>()

/**
 * What a network's upstreams were seen to answer lately of eth_getLogs ranges they all refused wider,
 * each width for learnedLimitMs. It is kept per network, not per upstream: a range is split only when
 * every upstream of the network refused it, and its chunks go to whichever member the pool picks, so
 * a width is worth knowing when it holds for the network. A reload that changes the network's
 * upstreams makes a new network, which starts knowing nothing.
 * - `stated`: the narrowest width every upstream stated (dRPC's `ranges over 1000 blocks`);
 * - `worked`: where the refusals stated no width, the widest chunk then answered. A refusal of the
 *   range itself (besu's, Chainstack's) holds whatever the query: the width is the network's. A
 *   refusal of the answer's size (`more than 10000 results`, `response too large`) depends on how
 *   many logs the blocks hold for the query: the width is kept for the filter alone (its addresses
 *   and topics), for maxLearnedFilters filters, so that a dense query never splits a sparse one.
 */
export class LogsWidths {
  #stated: Learned | undefined
  #worked: Learned | undefined
  readonly #byFilter = new Map<string, Learned>()

  /** The network's, made when first asked for. */
  static of(network: Network): LogsWidths {
    let found = widths.get(network)
    if (found === undefined) {
      found = new LogsWidths()
      widths.set(network, found)
    }
    return found
  }

  /** The narrowest width that holds now for a query with `filter`; undefined when none is known. */
  widthFor(filter: Record<string, unknown>, nowMs: number): bigint | undefined {
    let width = narrower(held(this.#stated, nowMs), held(this.#worked, nowMs))
    if (this.#byFilter.size > 0) width = narrower(width, held(this.#byFilter.get(filterKey(filter)), nowMs))
    return width
  }

  /** A width every upstream stated: kept when it is the narrowest that holds (a wider one waits until it expires). */
  learnStated(blocks: bigint, nowMs: number): void {
    const learned = held(this.#stated, nowMs)
    if (learned === undefined || blocks < learned) this.#stated = { blocks, untilMs: nowMs + learnedLimitMs }
  }

  /**
   * The widest chunk answered after refusals that stated no width: the network's when they refused
   * the range, the filter's when they refused the answer's size (`bySize`). It replaces what was
   * known: a split is asked only where what was known did not hold.
   */
  learnWorked(filter: Record<string, unknown>, blocks: bigint, bySize: boolean, nowMs: number): void {
    const learned = { blocks, untilMs: nowMs + learnedLimitMs }
    if (!bySize) {
      this.#worked = learned
      return
    }
    const key = filterKey(filter)
    this.#byFilter.delete(key)
    if (this.#byFilter.size >= maxLearnedFilters) {
      const oldest = this.#byFilter.keys().next().value as string
      this.#byFilter.delete(oldest)
    }
    this.#byFilter.set(key, learned)
  }
}

function held(learned: Learned | undefined, nowMs: number): bigint | undefined {
  return learned !== undefined && nowMs < learned.untilMs ? learned.blocks : undefined
}

function narrower(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b
  return b !== undefined && b < a ? b : a
}

/** A filter without its range, as a short digest: whatever a client sends, a key takes 43 characters. */
function filterKey(filter: Record<string, unknown>): string {
  const { fromBlock: _from, toBlock: _to, ...rest } = filter
  return createHash('sha256').update(JSON.stringify(rest)).digest('base64url')
}
