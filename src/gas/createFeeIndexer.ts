import type { Logger } from 'pino'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import { callUpstream, UpstreamRpcError } from '../upstreams/callUpstream.ts'
import { type FeeHistory, feeHistoryFromBlocks } from './feeHistoryFromBlocks.ts'
import { type FeeBlock, type FeeHistoryStore, rewardPercentiles } from './feeHistoryStore.ts'
import { getNodePriorityFee } from './getNodePriorityFee.ts'

/** What the gas endpoints compute from: the stored window, oldest first, and the next block's base fee. */
export type FeeWindow = {
  head: number
  blocks: FeeBlock[]
  nextBaseFee: bigint
  /**
   * The node's eth_maxPriorityFeePerGas, the suggested tip when no block in the window carries
   * transactions. Asked for only then (undefined otherwise, and when the node lacks the method).
   */
  nodePriorityFee: bigint | undefined
}

export type FeeIndexerStatus = 'loading' | 'ready' | 'no-base-fee'

export type FeeIndexer = {
  chainId: number
  network: Network
  status(): FeeIndexerStatus
  /** The current window (undefined while nothing is stored yet); replaced, never mutated, on change. */
  window(): FeeWindow | undefined
  /**
   * One pass up to the network's newest head: reorg check, new blocks, backfill of what the window
   * lacks. Passes never overlap; a head that comes during one starts another after it.
   */
  tick(): Promise<void>
  /** Follows the network's head tracker: a pass now and on each new head. Separate from the tracker. */
  start(): void
  stop(): Promise<void>
}

export type FeeIndexerOptions = {
  network: Network
  store: FeeHistoryStore
  windowBlocks: number
  chunkBlocks: number
  /** How soon a pass that failed is tried again (a new head also starts one). */
  pollMs: number
  log: Logger
}

/** How many observed head hashes are kept to find where a reorg forked. */
const keptHeadHashes = 256

/**
 * Keeps the last `windowBlocks` blocks of fee history in the store, driven by the network's head
 * tracker (it asks no node for its head): backfills with eth_feeHistory in chunks of at most
 * `chunkBlocks` (newest first), resumes from what is stored after a restart, and replaces blocks a
 * reorg dropped. Requests only read its window.
 */
export function createFeeIndexer(options: FeeIndexerOptions): FeeIndexer {
  const { network, store, windowBlocks, chunkBlocks, log } = options
  const chainId = network.chainId
  let status: FeeIndexerStatus = 'loading'
  let window: FeeWindow | undefined
  /** The stored window has every block from its start to its head: new heads only append. */
  let complete = false
  let running: Promise<void> | undefined
  /** A head came during a pass: another pass follows it. */
  let again = false
  let retryTimer: NodeJS.Timeout | undefined
  let stopHeads: (() => void) | undefined
  let stopped = false
  /** The chain left its blocks from this one on (a reorg, a rewind, a new chain): the next pass replaces them. */
  let forkFrom: number | undefined
  /** The head the pass under way indexes up to. */
  let passHead = 0

  const rpc = <T>(method: string, params: unknown[]) => callUpstream<T>(network.pool, method, params)

  async function nodeHash(number: number): Promise<string | undefined> {
    return (await rpc<Header | null>('eth_getBlockByNumber', [hex(number), false]))?.hash
  }

  /** Finds where the stored chain and the node's part, and drops what the node no longer has. */
  async function handleReorg(head: Header, headNumber: number): Promise<boolean> {
    const known = [...(await store.getHeadHashes(chainId))].sort((a, b) => b[0] - a[0])
    const [top] = known
    if (!top) return false
    // the usual case: the new head's parent is the stored head (the tracker's chain is linked)
    if (top[0] === headNumber - 1 && top[1] === head.parentHash) return false
    const topAtNode =
      top[0] === headNumber ? head.hash : top[0] > headNumber ? undefined : await nodeHash(top[0])
    if (topAtNode === top[1]) return false
    let forkAt = (known[known.length - 1]?.[0] ?? headNumber) - 1
    for (const [number, hash] of known) {
      if (number > headNumber) continue
      if ((await nodeHash(number)) === hash) {
        forkAt = number
        break
      }
    }
    // at a start this is most often a devnet restarted since the history was stored, not a reorg
    log.info(
      { chainId, forkAt, head: headNumber },
      "the stored fee history is not the chain's above the fork (a reorg, or a devnet restarted since): replacing it",
    )
    await store.deleteFrom(chainId, forkAt + 1)
    return true
  }

  /** Fetches and stores blocks from..to; returns them, and the next base fee when `to` is the newest. */
  async function fetchRange(
    from: number,
    to: number,
  ): Promise<{ blocks: FeeBlock[]; next: bigint | undefined }> {
    const count = to - from + 1
    let history: FeeHistory
    try {
      history = await rpc<FeeHistory>('eth_feeHistory', [hex(count), hex(to), rewardPercentiles])
    } catch (err) {
      // some nodes keep fee history for recent blocks only (anvil: 2048); compute older ones from blocks
      if (!(err instanceof UpstreamRpcError)) throw err
      history = await feeHistoryFromBlocks(network.pool, from, to)
    }
    const oldest = Number(history.oldestBlock)
    const blocks: FeeBlock[] = history.gasUsedRatio.map((ratio, index) => ({
      number: oldest + index,
      baseFee: BigInt(history.baseFeePerGas[index] ?? 0),
      gasUsedRatio: ratio,
      rewards: (history.reward?.[index] ?? rewardPercentiles.map(() => '0x0')).map((value) => BigInt(value)),
    }))
    await store.upsert(chainId, blocks)
    const nextHex = history.baseFeePerGas[history.gasUsedRatio.length]
    const next = nextHex !== undefined && oldest + blocks.length - 1 === to ? BigInt(nextHex) : undefined
    if (next !== undefined) {
      const saved = await store.getNextBaseFee(chainId)
      // one saved above the head is of blocks the chain left
      if (!saved || saved.head <= to || saved.head > passHead) await store.setNextBaseFee(chainId, to, next)
    }
    return { blocks, next }
  }

  /** The tracker's newest head; before it has one (it polls at start), asks it to poll. */
  async function newestHead(): Promise<Header | undefined> {
    if (!network.heads.header()) await network.heads.poll()
    return network.heads.header()
  }

  async function tickOnce(): Promise<void> {
    const head = await newestHead()
    if (!head) throw new Error('no head known yet')
    if (head.baseFeePerGas === undefined) {
      status = 'no-base-fee'
      return
    }
    const headNumber = Number(head.number)
    passHead = headNumber
    let changed = false
    if (forkFrom !== undefined) {
      const from = forkFrom
      log.info({ chainId, from, head: headNumber }, 'the chain left blocks: replacing their fee history')
      await store.deleteFrom(chainId, from)
      // a fork heard of meanwhile, lower than this one, is kept for the next pass
      if (forkFrom === from) forkFrom = undefined
      complete = false
      changed = true
    }
    changed = (await handleReorg(head, headNumber)) || changed
    if (!changed && window?.head === headNumber) return

    const from = Math.max(0, headNumber - windowBlocks + 1)
    // the usual case once the window is full: a few new blocks on top of it, kept in memory
    if (
      !changed &&
      complete &&
      window &&
      headNumber > window.head &&
      headNumber - window.head <= chunkBlocks
    ) {
      const { blocks, next } = await fetchRange(window.head + 1, headNumber)
      await store.setHeadHash(chainId, headNumber, head.hash, keptHeadHashes)
      await store.deleteBelow(chainId, from)
      const kept = [...window.blocks, ...blocks].slice(-windowBlocks)
      window = {
        head: headNumber,
        blocks: kept,
        nextBaseFee: next ?? window.nextBaseFee,
        nodePriorityFee: await getNodePriorityFee(network, kept, log),
      }
      return
    }

    const stored = new Set(await store.storedNumbers(chainId, from, headNumber))
    const nextBaseFee = await store.getNextBaseFee(chainId)
    // missing blocks, newest first, in chunks of at most chunkBlocks
    let end = headNumber
    let fetchedHead = false
    while (end >= from && !stopped) {
      if (stored.has(end)) {
        end--
        continue
      }
      let start = end
      while (start - 1 >= from && !stored.has(start - 1) && end - (start - 1) + 1 <= chunkBlocks) start--
      await fetchRange(start, end)
      if (end === headNumber) fetchedHead = true
      changed = true
      end = start - 1
    }
    if (nextBaseFee?.head !== headNumber && !fetchedHead) {
      await fetchRange(headNumber, headNumber)
      changed = true
    }
    await store.setHeadHash(chainId, headNumber, head.hash, keptHeadHashes)
    await store.deleteBelow(chainId, from)

    const blocks = await store.latest(chainId, headNumber, windowBlocks)
    const next = await store.getNextBaseFee(chainId)
    if (blocks.length > 0 && next) {
      window = {
        head: headNumber,
        blocks,
        nextBaseFee: next.baseFee,
        nodePriorityFee: await getNodePriorityFee(network, blocks, log),
      }
      status = 'ready'
      complete = !stopped && blocks.length === headNumber - from + 1
    }
  }

  function tick(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await tickOnce()
      } while (again && !stopped)
    })().finally(() => {
      running = undefined
    })
    return running
  }

  /** A pass; one that fails is tried again after pollMs, unless a new head starts one first. */
  function pass(): void {
    clearTimeout(retryTimer)
    tick().catch((err) => {
      log.warn({ err, chainId }, 'fee history update failed; retrying')
      if (stopped) return
      retryTimer = setTimeout(pass, options.pollMs)
      retryTimer.unref()
    })
  }

  function onHead(event: HeadEvent): void {
    if (event.kind === 'fork' || event.kind === 'newChain') {
      const from = event.kind === 'fork' ? Number(event.from) : 0
      forkFrom = Math.min(forkFrom ?? from, from)
      pass()
    } else if (event.kind === 'head') pass()
  }

  return {
    chainId,
    network,
    status: () => status,
    window: () => window,
    tick,
    start() {
      stopped = false
      stopHeads ??= network.heads.subscribe(onHead)
      pass()
    },
    async stop() {
      stopped = true
      stopHeads?.()
      stopHeads = undefined
      clearTimeout(retryTimer)
      await running?.catch(() => undefined)
    },
  }
}

function hex(value: number): string {
  return `0x${value.toString(16)}`
}
