import type { Logger } from 'pino'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { Leadership } from '../store/leadership.ts'
import type { FeeIndexer, FeeIndexerStatus, FeeWindow } from './createFeeIndexer.ts'
import type { FeeBlock, FeeHistoryStore } from './feeHistoryStore.ts'
import { getNodePriorityFee } from './getNodePriorityFee.ts'

export type SharedFeeIndexerOptions = {
  network: Network
  /** This process's indexer for the chain, made (not started) each time this process takes the lead. */
  createIndexer(): FeeIndexer
  /** One process at a time indexes the chain: the holder of this. */
  leadership: Leadership
  store: FeeHistoryStore
  windowBlocks: number
  /**
   * A window to serve until this one has its own: the one of the indexer it replaces on the same
   * chain (a reload rebuilt the network), so that the Gas API does not answer "loading" meanwhile.
   */
  seed?: FeeWindow | undefined
  /** While following: how soon the store is read again when the indexed head is behind the network's. */
  followMs?: number
  log: Logger
}

/**
 * Blocks of our own chain a follower remembers the hashes of: as many as the indexer keeps head
 * hashes in the store. A stored head further below our head than this is checked by number only.
 */
const rememberedHashes = 256

/**
 * One chain's fee history, indexed by one process among all on the database and read by the rest.
 * The process that holds the leadership runs the indexer; the others read the window it stores
 * (fee_history, its head hashes, the next base fee) on each head their own tracker announces, until
 * it has caught up with that head. They follow reorgs and rewinds as the indexer does: blocks their
 * own tracker says the chain left leave their window at once, and a stored head above their
 * tracker's, or another block than their chain's at its number, is not caught up (the indexer has
 * not replaced what the chain left yet): they read again until the store agrees. The gas API asks
 * `window()` the same way on either: a new window (a new object) per indexed head. Taking or losing
 * the lead switches between the two; the last window stays served until the other side has one.
 */
export function createSharedFeeIndexer(options: SharedFeeIndexerOptions): FeeIndexer {
  const { network, leadership, store, windowBlocks, followMs = 250, log } = options
  const { chainId } = network
  let leading: FeeIndexer | undefined
  let followed: FeeWindow | undefined = options.seed
  /** The hash of the followed window's head, to tell whether new blocks extend it. */
  let followedHash: string | undefined
  let followStatus: FeeIndexerStatus = 'loading'
  let reading: Promise<void> | undefined
  let again = false
  let retryTimer: NodeJS.Timeout | undefined
  let stopHeads: (() => void) | undefined
  let stopLeadership: (() => void) | undefined
  let stopped = true
  /**
   * Our own chain's recent blocks, number to hash, as our tracker announced them (the newest
   * rememberedHashes): what a stored head is checked against.
   */
  const chainHashes = new Map<number, string>()
  /** Bumped each time our chain leaves blocks: a read of the store begun before is not taken. */
  let forks = 0

  /** Reads the indexed window from the store; answers whether the indexer is behind our head. */
  async function readOnce(): Promise<boolean> {
    const forksBefore = forks
    const header = network.heads.header()
    if (header && header.baseFeePerGas === undefined) {
      followStatus = 'no-base-fee'
      return false
    }
    const hashes = await store.getHeadHashes(chainId)
    let head = -1
    for (const number of hashes.keys()) if (number > head) head = number
    const hash = hashes.get(head)
    const next = await store.getNextBaseFee(chainId)
    // nothing indexed yet, or the indexer is between its writes for a head: look again soon
    if (hash === undefined || next?.head !== head) return true
    // the store above our chain's head or on another branch: blocks our chain left that the indexer
    // has not replaced yet (or one our tracker has not heard of): look again until it agrees
    if (!agreesWithChain(head, hash, header)) return true
    const previous = followed
    if (previous?.head !== head || followedHash !== hash || previous.nextBaseFee !== next.baseFee) {
      let blocks: FeeBlock[] | undefined
      const added = head - (previous?.head ?? head)
      // the usual case: a few blocks on top of the window read before
      if (previous && added > 0 && added < windowBlocks && hashes.get(previous.head) === followedHash) {
        const fresh = await store.latest(chainId, head, added)
        if (fresh.length === added && fresh[0]?.number === previous.head + 1)
          blocks = [...previous.blocks, ...fresh].slice(-windowBlocks)
      }
      blocks ??= await store.latest(chainId, head, windowBlocks)
      if (blocks.length === 0) return true
      const nodePriorityFee = await getNodePriorityFee(network, blocks, log)
      // our chain left blocks while the store was read: what was read may hold them
      if (forks !== forksBefore) return true
      followed = { head, blocks, nextBaseFee: next.baseFee, nodePriorityFee }
      followedHash = hash
      followStatus = 'ready'
    }
    return header !== undefined && head < Number(header.number)
  }

  /** A read of the store; reads never overlap, and one asked for during another follows it. */
  function read(): Promise<void> {
    if (reading) {
      again = true
      return reading
    }
    clearTimeout(retryTimer)
    reading = (async () => {
      let behind = false
      do {
        again = false
        behind = await readOnce()
      } while (again && !stopped && !leading)
      if (behind) later()
    })()
      .catch((err) => {
        log.warn({ err, chainId }, 'reading the shared fee history failed; retrying')
        later()
      })
      .finally(() => {
        reading = undefined
      })
    return reading
  }

  function later(): void {
    if (stopped || leading) return
    clearTimeout(retryTimer)
    retryTimer = setTimeout(() => void read(), followMs)
    retryTimer.unref()
  }

  /**
   * Whether a stored head `head` with `hash` is on our chain as our tracker has it (`header`, its
   * newest block): not above it, and where we know our block at that number, the same block.
   */
  function agreesWithChain(head: number, hash: string, header: Header | undefined): boolean {
    if (header === undefined) return true
    const ours = Number(header.number)
    if (head > ours) return false
    const known = head === ours ? header.hash : chainHashes.get(head)
    return known === undefined || known === hash
  }

  function rememberHash(header: Header): void {
    chainHashes.set(Number(header.number), header.hash)
    if (chainHashes.size > rememberedHashes) chainHashes.delete(chainHashes.keys().next().value as number)
  }

  /**
   * Our chain left its blocks from `from` on (a reorg, a rewind, a new chain: 0): they leave the
   * followed window at once, as the indexer drops them from the store, whatever the store still
   * says. The next base fee is then the first block left's: a block's base fee follows from its
   * parent alone, which both branches share. A window with nothing left is served no more until the
   * store has the chain's.
   */
  function leave(from: number): void {
    forks++
    for (const number of chainHashes.keys()) if (number >= from) chainHashes.delete(number)
    if (!followed || followed.head < from) return
    const kept = followed.blocks.filter((block) => block.number < from)
    const firstLeft = followed.blocks.find((block) => block.number === from)
    followed =
      kept.length === 0 || firstLeft === undefined
        ? undefined
        : { ...followed, head: from - 1, blocks: kept, nextBaseFee: firstLeft.baseFee }
    // the next window read from the store is read whole: this one is short of the blocks it lost
    followedHash = undefined
  }

  function onHead(event: HeadEvent): void {
    if (event.kind === 'head') rememberHash(event.header)
    else if (event.kind === 'fork') leave(Number(event.from))
    else if (event.kind === 'dropped') {
      // its fork left it already, unless the window took it in since
      const number = Number(event.header.number)
      if (followed && followed.head >= number) leave(number)
    } else leave(0)
    if (event.kind !== 'dropped') void read()
  }

  function follow(): void {
    stopHeads ??= network.heads.subscribe(onHead)
    void read()
  }

  function lead(): void {
    stopHeads?.()
    stopHeads = undefined
    clearTimeout(retryTimer)
    // news where instances compete for the lead (PostgreSQL); alone on SQLite, a process always leads,
    // and the line would only stand above the start banner
    const level = leadership.sole ? 'debug' : 'info'
    log[level]({ chainId, network: network.name }, 'this instance indexes the fee history of the chain')
    leading = options.createIndexer()
    leading.start()
  }

  function onLeadership(held: boolean): void {
    if (stopped) return
    if (held) {
      if (!leading) lead()
      return
    }
    const lost = leading
    if (!lost) return
    leading = undefined
    log.warn(
      { chainId, network: network.name },
      'this instance no longer indexes the fee history; following it',
    )
    // served on until the store gives a window of its own
    if (!followed) followed = lost.window()
    void lost.stop()
    follow()
  }

  return {
    chainId,
    network,
    status() {
      const own = leading?.status()
      if (own === 'ready' || own === 'no-base-fee') return own
      return followed && followStatus === 'loading' ? 'ready' : followStatus
    },
    window: () => leading?.window() ?? followed,
    tick: () => (leading ? leading.tick() : read()),
    start() {
      if (!stopped) return
      stopped = false
      stopLeadership = leadership.onChange(onLeadership)
      if (leadership.held()) lead()
      else follow()
    },
    async stop() {
      stopped = true
      stopLeadership?.()
      stopHeads?.()
      stopHeads = undefined
      clearTimeout(retryTimer)
      const own = leading
      leading = undefined
      await Promise.all([own?.stop(), reading])
    },
  }
}
