import type { Logger } from 'pino'
import { callUpstream } from '../upstreams/callUpstream.ts'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'

export type Header = Record<string, unknown> & { number: string; hash: string; parentHash: string }

/** In order: each new canonical block once; on a reorg, first the blocks it dropped (newest first). */
export type HeadEvent = { kind: 'head'; header: Header } | { kind: 'dropped'; header: Header }

export type HeadFeed = {
  subscribe(listener: (event: HeadEvent) => void): () => void
  close(): void
}

export type HeadFeedOptions = {
  pool: UpstreamPool
  /** Upstream newHeads over WebSocket when there is one; otherwise polling every `pollMs`. */
  socket: UpstreamSocket | undefined
  pollMs: number
  log: Logger
}

/** Blocks remembered to link new heads to, and to find where a reorg forked. */
const rememberedBlocks = 128

/**
 * One network's chain of heads, gap-free and in order whatever the upstream does: heads missed while
 * a WebSocket was down (or skipped by polling) are fetched by number, a reorg is walked back by hash
 * to the fork, and its dropped blocks are announced before the new chain. Runs while it has listeners;
 * one upstream subscription serves every listener.
 */
export function createHeadFeed(options: HeadFeedOptions): HeadFeed {
  const { pool, socket, log } = options
  const listeners = new Set<(event: HeadEvent) => void>()
  let chain: Header[] = []
  let queue: Promise<void> = Promise.resolve()
  let stopSource: (() => void) | undefined
  /** The fields of the upstream's own newHeads objects, in its order, once one has come. */
  let headerFields: string[] | undefined

  const fetchBlock = (method: 'eth_getBlockByNumber' | 'eth_getBlockByHash', id: string) =>
    callUpstream<Header | null>(pool, method, [id, false]).then((block) => {
      if (!block) throw new Error(`${method} ${id}: no such block`)
      return toHeader(block, headerFields)
    })

  function emit(event: HeadEvent): void {
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (err) {
        log.error({ err }, 'head listener failed')
      }
    }
  }

  async function process(incoming: Header): Promise<void> {
    const last = chain[chain.length - 1]
    // the first head only anchors the chain: listeners hear of blocks that come after they subscribed
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
          ? await fetchBlock('eth_getBlockByNumber', hex(parentNumber))
          : await fetchBlock('eth_getBlockByHash', cursor.parentHash)
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

  function accept(header: Header): void {
    queue = queue
      .then(() => process(header))
      .catch((err) => log.warn({ err }, 'could not follow a new head; waiting for the next one'))
  }

  /** The upstream's own newHeads object is relayed as the node sent it, and sets the shape of fetched ones. */
  function acceptNotification(header: unknown): void {
    if (typeof header !== 'object' || header === null) return
    headerFields = Object.keys(header)
    accept(header as Header)
  }

  const acceptLatest = () =>
    fetchBlock('eth_getBlockByNumber', 'latest').then(accept, (err) =>
      log.warn({ err }, 'latest block unavailable'),
    )

  function start(): void {
    if (socket) {
      // after a reconnect, the latest block fills what was missed even if no new block comes soon
      stopSource = socket.subscribe(['newHeads'], acceptNotification, () => void acceptLatest())
      void acceptLatest()
      return
    }
    const timer = setInterval(() => void acceptLatest(), options.pollMs)
    timer.unref()
    void acceptLatest()
    stopSource = () => clearInterval(timer)
  }

  return {
    subscribe(listener) {
      listeners.add(listener)
      if (listeners.size === 1) start()
      return () => {
        listeners.delete(listener)
        if (listeners.size === 0) {
          stopSource?.()
          stopSource = undefined
          chain = []
        }
      }
    },
    close() {
      listeners.clear()
      stopSource?.()
    },
  }
}

/**
 * A fetched block (eth_getBlockBy*, transaction hashes only) shaped like the node's own newHeads objects:
 * the fields they carry, in their order (geth's carry no `transactions`, `uncles` or `size`; anvil's
 * carry every field of the block). With no upstream subscription to learn from (polling, or before
 * the first notification) the block goes out as the node returned it.
 */
function toHeader(block: Header, fields: readonly string[] | undefined): Header {
  if (!fields) return block
  const header: Record<string, unknown> = {}
  for (const field of fields) if (field in block) header[field] = block[field]
  return header as Header
}

function hex(value: number): string {
  return `0x${value.toString(16)}`
}
