import { createHash } from 'node:crypto'
import type { Network } from '../networks/createNetwork.ts'
import type { RangeLimit } from '../upstreams/readRangeLimit.ts'

/**
 * How long a learned width holds: then a query wider than it is asked whole again, and learns it anew.
 * @internal exported for its tests
 */
export const learnedLimitMs = 10 * 60_000

/**
 * The most filters whose widths are kept per network: past it, the oldest learned goes.
 * @internal exported for its tests
 */
export const maxLearnedFilters = 256

/** A width in blocks, and until when it holds (`untilMs`, on the clock of splitLogsRange). */
type Learned = { blocks: bigint; untilMs: number }

/**
 * What the upstreams did with ranges, where their refusals stated no width: the narrowest range they
 * all refused, and the widest answered narrower than it (undefined while none was).
 */
type Bounds = { refused: Learned | undefined; answered: Learned | undefined }

/**
 * What is known now of the ranges a query is answered at: the narrowest known to be refused (a
 * query at least as wide is split at once), and the widest known to be answered below it (the width
 * a split begins with).
 */
export type KnownWidths = { refused: bigint | undefined; answered: bigint | undefined }

const widths = new WeakMap<Network, LogsWidths>()

/**
 * What a network's upstreams were seen to do lately with eth_getLogs ranges, each width for
 * learnedLimitMs. It is kept per network, not per upstream: a range is split only when every
 * upstream of the network refused it, and its chunks go to whichever member the pool picks, so a
 * width is worth knowing when it holds for the network. A reload that changes the network's
 * upstreams makes a new network, which starts knowing nothing.
 * - `stated`: the narrowest width every upstream stated (dRPC's `ranges over 1000 blocks`);
 * - where the refusals stated no width, two bounds: the narrowest range every upstream refused, and
 *   the widest then answered below it, whole or as a chunk. A query narrower than the refused one
 *   is asked whole, however narrow the chunks of another query's split were: one query never makes
 *   others pay for a split the node did not need. A refusal of the range itself (besu's,
 *   Chainstack's) holds whatever the query: the bounds are the network's. A refusal of the answer's
 *   size (`more than 10000 results`, `response too large`) depends on how many logs the blocks hold
 *   for the query: its bounds are kept for the filter alone (its addresses and topics), for
 *   maxLearnedFilters filters, so that a dense query never splits a sparse one.
 */
export class LogsWidths {
  #stated: Learned | undefined
  readonly #range: Bounds = { refused: undefined, answered: undefined }
  readonly #bySize = new Map<string, Bounds>()

  /** The network's, made when first asked for. */
  static of(network: Network): LogsWidths {
    let found = widths.get(network)
    if (found === undefined) {
      found = new LogsWidths()
      widths.set(network, found)
    }
    return found
  }

  /** What holds now for a query with `filter`: the narrowest of every bound that applies to it. */
  knownFor(filter: Record<string, unknown>, nowMs: number): KnownWidths {
    const stated = held(this.#stated, nowMs)
    const known = {
      refused: stated === undefined ? undefined : stated + 1n,
      answered: stated,
    }
    narrowTo(known, this.#range, nowMs)
    if (this.#bySize.size > 0) narrowTo(known, this.#bySize.get(filterKey(filter)), nowMs)
    // one kind's width answered may be refused for the other: no width known to be answered then
    if (known.answered !== undefined && known.refused !== undefined && known.answered >= known.refused)
      known.answered = undefined
    return known
  }

  /**
   * `limit` as a refusal read it (for a split at once, nothing); where it states no width, the
   * widest known to be answered lately for `filter`: the chunks begin at it rather than at halves.
   */
  withKnownWidth(filter: Record<string, unknown>, limit: RangeLimit, nowMs: number): RangeLimit {
    if (limit.limitBlocks !== undefined) return limit
    const { answered } = this.knownFor(filter, nowMs)
    return answered === undefined ? limit : { ...limit, limitBlocks: answered }
  }

  /**
   * What a range of `blocks` every upstream refused with `limit` teaches: the width it states, else
   * that this width is refused.
   */
  learnRefusal(filter: Record<string, unknown>, blocks: bigint, limit: RangeLimit, nowMs: number): void {
    if (limit.limitBlocks !== undefined) this.learnStated(limit.limitBlocks, nowMs)
    else this.learnRefused(filter, blocks, limit.bySize === true, nowMs)
  }

  /** A width every upstream stated: kept when it is the narrowest that holds (a wider one waits until it expires). */
  learnStated(blocks: bigint, nowMs: number): void {
    const learned = held(this.#stated, nowMs)
    if (learned === undefined || blocks < learned) this.#stated = { blocks, untilMs: nowMs + learnedLimitMs }
  }

  /**
   * A range of `blocks` every upstream refused stating no width: the network's when they refused the
   * range, the filter's when they refused the answer's size (`bySize`). Kept when it is the narrowest
   * that holds; a width answered that is not narrower is forgotten (the upstreams changed).
   */
  learnRefused(filter: Record<string, unknown>, blocks: bigint, bySize: boolean, nowMs: number): void {
    const bounds = bySize ? this.#filterBounds(filter) : this.#range
    const refused = held(bounds.refused, nowMs)
    if (refused !== undefined && refused < blocks) return
    bounds.refused = { blocks, untilMs: nowMs + learnedLimitMs }
    const answered = held(bounds.answered, nowMs)
    if (answered !== undefined && answered >= blocks) bounds.answered = undefined
  }

  /**
   * A range of `blocks` answered with logs, for a query with `filter`: it widens the width known to
   * be answered, the network's and the filter's, where a wider range was refused (the width a split
   * begins with never reaches a width refused).
   */
  learnAnswered(filter: Record<string, unknown>, blocks: bigint, nowMs: number): void {
    widen(this.#range, blocks, nowMs)
    if (this.#bySize.size === 0) return
    const bounds = this.#bySize.get(filterKey(filter))
    if (bounds) widen(bounds, blocks, nowMs)
  }

  /** The bounds of `filter`'s answer-size refusals, made the newest (the oldest goes past maxLearnedFilters). */
  #filterBounds(filter: Record<string, unknown>): Bounds {
    const key = filterKey(filter)
    const found = this.#bySize.get(key) ?? { refused: undefined, answered: undefined }
    this.#bySize.delete(key)
    if (this.#bySize.size >= maxLearnedFilters) {
      const oldest = this.#bySize.keys().next().value as string
      this.#bySize.delete(oldest)
    }
    this.#bySize.set(key, found)
    return found
  }
}

/** `known` narrowed to what `bounds` holds now: its width answered counts only while its refusal holds. */
function narrowTo(known: KnownWidths, bounds: Bounds | undefined, nowMs: number): void {
  const refused = held(bounds?.refused, nowMs)
  if (refused === undefined) return
  known.refused = narrower(known.refused, refused)
  known.answered = narrower(known.answered, held(bounds?.answered, nowMs))
}

function widen(bounds: Bounds, blocks: bigint, nowMs: number): void {
  const refused = held(bounds.refused, nowMs)
  if (refused === undefined || blocks >= refused) return
  const answered = held(bounds.answered, nowMs)
  if (answered === undefined || blocks >= answered)
    bounds.answered = { blocks, untilMs: nowMs + learnedLimitMs }
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
