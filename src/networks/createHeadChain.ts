export type Header = Record<string, unknown> & { number: string; hash: string; parentHash: string }

/**
 * In order. A new canonical block: `head`, each once. When the chain leaves blocks (a reorg, a
 * rewind, a new chain), first `fork` (every block from `from` on is gone; `to` is the chain's new
 * head and `before` its head until then, so `to < before` when it went back; `deeper`: the fork is
 * older than the chain remembers, so blocks below `from` may be gone too; `pastFinality`: blocks at
 * or below the finalized one changed, or may have), then `dropped` for each
 * block it had (newest first), then the new branch's blocks as `head`, oldest first.
 */
export type HeadEvent =
  | { kind: 'head'; header: Header }
  | { kind: 'fork'; from: bigint; to: bigint; before: bigint; deeper: boolean; pastFinality: boolean }
  | { kind: 'dropped'; header: Header }
  /** The network's upstreams serve another chain under the same chain id (its genesis block differs). */
  | { kind: 'newChain'; genesis: string }

export type HeadChain = {
  /**
   * The network's newest block, whatever it is: higher (new blocks, gaps fetched), at the same height
   * (a reorg), or lower: a reorg to a shorter branch, or (`goesBack`: the caller saw the chain's own
   * upstreams go back) a rewind, once the node confirms the chain's tip is gone. Only the newest head
   * waits while another is linked. Events for it go out once it is linked; the first one anchors the
   * chain, and its ancestors are fetched behind it.
   */
  accept(header: Header, goesBack?: boolean): void
  /** The newest block of the chain (undefined while it is empty). */
  tip(): Header | undefined
  /** The chain's block at `number`, if it remembers it. */
  at(number: bigint): Header | undefined
  /** Whether the chain has the block with this hash (lowercase), among those it remembers. */
  has(hash: string): boolean
  /** Forgets the chain: the next head only anchors it again. */
  reset(): void
}

export type HeadChainOptions = {
  /** A block by number (hex) or hash, shaped like a head; null when the node has no such block. */
  fetchBlock(method: 'eth_getBlockByNumber' | 'eth_getBlockByHash', id: string): Promise<Header | null>
  emit(event: HeadEvent): void
  /** A head that could not be linked (a fetch failed): the chain waits for the next one. */
  onError(err: unknown): void
  /** The network's finalized block number, if known: a fork at or below it is `pastFinality`. */
  finalized?: () => bigint | undefined
  /** Blocks remembered: reorgs up to this deep are walked to their fork (default rememberedBlocks). */
  depth?: number
}

/** Blocks remembered to link new heads to and find where a reorg forked: its fork, at most this deep, is found. */
export const rememberedBlocks = 1024
/** Ancestors fetched per step of the backfill behind the first head (in parallel, by number). */
const backfillStep = 32
/** The most heads let pass between backfill steps that fail (a node that lacks old blocks is not asked on every head). */
const maxBackfillPause = 256

/**
 * The network's chain of recent blocks, gap-free and in order whatever its source does: heads skipped
 * (a WebSocket that was down, polling slower than blocks) are fetched, a reorg is walked back by
 * hash to its fork, a lower head drops the blocks above it, and what the chain left is announced
 * before the new branch. Behind the first head, its ancestors are fetched (a step at a time, between
 * heads) until `depth` blocks are known, so a reorg below the head it started at is found too.
 * Heads are handled one at a time.
 */
export function createHeadChain(options: HeadChainOptions): HeadChain {
  const { emit } = options
  const depth = options.depth ?? rememberedBlocks
  /** Oldest first, each block's parent the one before it. */
  let blocks: Header[] = []
  /** The newest head not linked yet: one that comes while another is linked replaces it. */
  let pending: { header: Header; goesBack: boolean } | undefined
  let draining = false
  /** Bumped by reset(): work begun before it is dropped. */
  let generation = 0
  /** Heads to let pass before the next backfill step, after steps that failed (doubling, to maxBackfillPause). */
  let backfillPause = 0
  let backfillSkips = 0

  const numberOf = (header: Header) => Number(header.number)
  const indexOf = (number: number) => {
    const first = blocks[0]
    return first === undefined ? -1 : number - numberOf(first)
  }
  const blockAt = (number: number) => blocks[indexOf(number)]

  async function fetchBlock(method: 'eth_getBlockByNumber' | 'eth_getBlockByHash', id: string) {
    const block = await options.fetchBlock(method, id)
    if (!block) throw new Error(`${method} ${id}: the node has no such block`)
    return block
  }

  /** Links the pending heads, newest first, and between them fetches ancestors; one run at a time. */
  async function drain(): Promise<void> {
    if (draining) return
    draining = true
    try {
      for (;;) {
        const at = generation
        const next = pending
        pending = undefined
        if (next) {
          await link(next.header, next.goesBack, at).catch((err) => options.onError(err))
          if (backfillSkips > 0) backfillSkips--
        } else if (wantsBackfill()) {
          await backfill(at).catch((err) => options.onError(err))
        } else return
      }
    } finally {
      draining = false
    }
  }

  async function link(incoming: Header, goesBack: boolean, at: number): Promise<void> {
    const tip = blocks[blocks.length - 1]
    if (!tip) {
      blocks = [incoming]
      return
    }
    const number = numberOf(incoming)
    const known = blockAt(number)
    if (known?.hash === incoming.hash) {
      if (known === tip || !goesBack) return
      // a lower head the chain has: a rewind to it, if the node no longer has the chain's tip (an
      // answer from a backend behind the others, say, is not one)
      const atTip = await options.fetchBlock('eth_getBlockByNumber', tip.number)
      if (at !== generation || atTip?.hash === tip.hash) return
      leave(number + 1, false, [])
      return
    }
    if (number - numberOf(tip) > depth) {
      // more new blocks than the chain remembers (its upstreams were away): if the tip is still the
      // node's, only announcements were missed, and the chain starts again at the new head
      const atTip = await options.fetchBlock('eth_getBlockByNumber', tip.number)
      if (at !== generation) return
      if (atTip?.hash === tip.hash) {
        blocks = [incoming]
        emit({ kind: 'head', header: incoming })
        return
      }
      leave(numberOf(blocks[0] as Header), true, [incoming])
      return
    }
    // walk back from the new head by its parents to a block the chain has
    const path = [incoming]
    let cursor = incoming
    let deeper = false
    for (;;) {
      const parentNumber = numberOf(cursor) - 1
      if (parentNumber < 0) break
      const oldest = blocks[0] as Header
      if (parentNumber < numberOf(oldest)) {
        // the new branch reaches below what the chain remembers: it forked there or deeper
        deeper = true
        break
      }
      if (blockAt(parentNumber)?.hash === cursor.parentHash) break
      const parent = await fetchBlock('eth_getBlockByHash', cursor.parentHash)
      // reset while the block was fetched: this head belongs to a chain that is gone
      if (at !== generation) return
      path.unshift(parent)
      cursor = parent
    }
    leave(numberOf(path[0] as Header), deeper, path)
  }

  /**
   * The chain from `from` on is replaced by `path` (which starts at `from`, or is empty: a rewind; it
   * starts above `from` only when the chain cannot tell where a deeper fork was).
   */
  function leave(from: number, deeper: boolean, path: Header[]): void {
    const before = blocks[blocks.length - 1]
    const keep = Math.max(0, indexOf(from))
    const dropped = blocks.slice(keep).reverse()
    blocks = blocks.slice(0, keep)
    if (before && (dropped.length > 0 || deeper)) {
      const finalized = options.finalized?.()
      const pastFinality = deeper || (finalized !== undefined && BigInt(from) <= finalized)
      const last = path[path.length - 1]
      const to = BigInt(last === undefined ? from - 1 : numberOf(last))
      emit({ kind: 'fork', from: BigInt(from), to, before: BigInt(numberOf(before)), deeper, pastFinality })
      for (const header of dropped) emit({ kind: 'dropped', header })
    }
    for (const header of path) {
      blocks.push(header)
      emit({ kind: 'head', header })
    }
    if (blocks.length > depth) blocks = blocks.slice(-depth)
  }

  function wantsBackfill(): boolean {
    const oldest = blocks[0]
    return backfillSkips === 0 && oldest !== undefined && blocks.length < depth && numberOf(oldest) > 0
  }

  /** After a step that failed, the next waits a number of heads, doubling. */
  function pauseBackfill(): void {
    backfillPause = Math.min(Math.max(1, backfillPause * 2), maxBackfillPause)
    backfillSkips = backfillPause
  }

  /** One step of fetching the oldest block's ancestors, until the chain remembers `depth` blocks. */
  async function backfill(at: number): Promise<void> {
    const oldest = blocks[0] as Header
    const count = Math.min(backfillStep, depth - blocks.length, numberOf(oldest))
    const numbers = Array.from({ length: count }, (_, index) => numberOf(oldest) - 1 - index)
    const fetched = await Promise.all(
      numbers.map((number) => fetchBlock('eth_getBlockByNumber', `0x${number.toString(16)}`)),
    ).catch((err) => {
      pauseBackfill()
      throw err
    })
    if (at !== generation || blocks[0] !== oldest) return
    // newest first: each must be the parent of the block above it (a reorg under way, or a node on
    // another branch, stops the step)
    let child = oldest
    const ancestors: Header[] = []
    for (const parent of fetched) {
      if (parent.hash !== child.parentHash) {
        pauseBackfill()
        return
      }
      ancestors.unshift(parent)
      child = parent
    }
    backfillPause = 0
    blocks = [...ancestors, ...blocks]
  }

  return {
    accept(header, goesBack = false) {
      pending = { header, goesBack }
      void drain()
    },
    tip: () => blocks[blocks.length - 1],
    at: (number) => blockAt(Number(number)),
    has: (hash) => blocks.some((block) => block.hash.toLowerCase() === hash),
    reset() {
      generation++
      blocks = []
      pending = undefined
      backfillPause = 0
      backfillSkips = 0
    },
  }
}
