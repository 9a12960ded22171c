export type Header = Record<string, unknown> & { number: string; hash: string; parentHash: string }

/** In order: each new canonical block once; on a reorg, first the blocks it dropped (newest first). */
export type HeadEvent = { kind: 'head'; header: Header } | { kind: 'dropped'; header: Header }

export type HeadChain = {
  /** Queues one head to link to the chain; events for it go out once the blocks before it are in. */
  accept(header: Header): void
  /** The newest block of the chain (undefined while it is empty). */
  tip(): Header | undefined
  /** Forgets the chain: the next head only anchors it again. */
  reset(): void
}

export type HeadChainOptions = {
  /** A block by number (hex) or hash, shaped like a head; rejects when the node has no such block. */
  fetchBlock(method: 'eth_getBlockByNumber' | 'eth_getBlockByHash', id: string): Promise<Header>
  emit(event: HeadEvent): void
  /** A head that could not be linked (a fetch failed): the chain waits for the next one. */
  onError(err: unknown): void
}

/** Blocks remembered to link new heads to, and to find where a reorg forked. */
const rememberedBlocks = 128

/**
 * A chain of heads, gap-free and in order whatever its source does: heads skipped (a WebSocket that
 * was down, polling slower than blocks) are fetched by number, a reorg is walked back by hash to the
 * fork, and its dropped blocks are announced before the new chain. Heads are handled one at a time.
 */
export function createHeadChain(options: HeadChainOptions): HeadChain {
  const { fetchBlock, emit } = options
  let chain: Header[] = []
  let queue: Promise<void> = Promise.resolve()
  /** Bumped by reset(): heads queued before it are dropped. */
  let generation = 0

  async function link(incoming: Header, at: number): Promise<void> {
    const last = chain[chain.length - 1]
    // the first head only anchors the chain: listeners hear of blocks that come after it
    if (!last) {
      chain.push(incoming)
      return
    }
    const known = chain.find((header) => header.number === incoming.number)
    if (known?.hash === incoming.hash) return
    // an older head from before what we remember (a late answer): nothing to announce
    if (!known && Number(incoming.number) <= Number(last.number)) return

    const path = [incoming]
    let cursor = incoming
    const oldest = Number(chain[0]?.number)
    for (;;) {
      const parentNumber = Number(cursor.number) - 1
      if (parentNumber < oldest || parentNumber < 0) break
      const parent = chain.find((header) => Number(header.number) === parentNumber)
      if (parent?.hash === cursor.parentHash) break
      const fetched =
        parentNumber > Number(last.number)
          ? await fetchBlock('eth_getBlockByNumber', `0x${parentNumber.toString(16)}`)
          : await fetchBlock('eth_getBlockByHash', cursor.parentHash)
      // reset while the block was fetched: this head belongs to a chain that is gone
      if (at !== generation) return
      path.unshift(fetched)
      cursor = fetched
    }
    const forkNumber = Number((path[0] as Header).number) - 1
    const dropped = chain.filter((header) => Number(header.number) > forkNumber).reverse()
    chain = chain.filter((header) => Number(header.number) <= forkNumber)
    for (const header of dropped) emit({ kind: 'dropped', header })
    for (const header of path) {
      chain.push(header)
      emit({ kind: 'head', header })
    }
    if (chain.length > rememberedBlocks) chain = chain.slice(-rememberedBlocks)
  }

  return {
    accept(header) {
      const at = generation
      queue = queue
        .then(() => (at === generation ? link(header, at) : undefined))
        .catch((err) => options.onError(err))
    },
    tip: () => chain[chain.length - 1],
    reset() {
      generation++
      chain = []
    },
  }
}
