import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { fetchBlock } from '../upstreams/fetchBlock.ts'
import type { HeadEvent } from './createHeadChain.ts'

export type ChainAnchors = {
  /** The network's finalized block number, or undefined while unknown (it goes back when the chain does). */
  finalized(): bigint | undefined
  /**
   * The highest finalized number since the cache last dropped what it kept as unchanging: a fork at
   * or below it changed blocks answers were kept for, even when the node's finalized went back since
   * (anvil's goes back while a reorg is under way).
   */
  finalizedMark(): bigint | undefined
  /** The hash of the chain's genesis block, once an upstream has answered it. */
  genesis(): string | undefined
  /**
   * Finalized from the best member at the head. Asked when the network's head moved, at most once
   * per finalizedEveryPolls × pollMs (`force`: now).
   */
  askFinalized(force: boolean): Promise<void>
  /**
   * The genesis block's hash from the member at the head: at the start (`again` false: once), and
   * again after a fork that may have reached it (a different one is a new chain under the same chain id).
   */
  askGenesis(again: boolean): Promise<void>
  /**
   * The chain left blocks: finalized goes back below the fork (dev chains rewrite "finalized" blocks),
   * the mark starts again with a fork past finality, and a fork at block 0 or deeper than the chain
   * remembers is checked for a new chain: the check, settled once it has answered (undefined: none).
   */
  noteFork(event: HeadEvent & { kind: 'fork' }): Promise<void> | undefined
  /**
   * What the fleet's lease holder reported (this instance follows it, createHeadSource): its finalized
   * block is taken as asked; a genesis other than the one known is asked of the node (a new chain is
   * this instance's own finding).
   */
  hear(finalized: bigint | undefined, genesis: string | undefined): void
}

export type ChainAnchorsOptions = {
  /** The head tracker's poll interval: finalized is asked at most once per finalizedEveryPolls of them. */
  pollMs: number
  /** One request's wait. */
  timeoutMs: number
  now: () => number
  /** The genesis block changed: a new chain under the same chain id (`before`: the one known until now). */
  onNewChain: (genesis: string, before: string) => void
}

const finalizedBlockBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_getBlockByNumber',
  params: ['finalized', false],
})
const genesisBlockBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_getBlockByNumber',
  params: ['0x0', false],
})

/** The finalized block is asked for at most once per this many pollMs (it moves slowly). */
const finalizedEveryPolls = 2

/**
 * A network's fixed points besides its heads, for the head tracker: its finalized block (the
 * cache keeps answers at or below it as unchanging) and its genesis block (the chain's identity),
 * each asked of the member in use at the head, one request at a time.
 */
export function createChainAnchors(pool: UpstreamPool, options: ChainAnchorsOptions): ChainAnchors {
  const { now, pollMs } = options
  let finalized: bigint | undefined
  let finalizedMark: bigint | undefined
  /** The pool's head when finalized was last asked for, and when. */
  let finalizedAsked: { head: bigint; at: number } | undefined
  let finalizing: Promise<void> | undefined
  let genesis: string | undefined
  let genesisAsked: Promise<void> | undefined
  /** The last genesis the fleet's holder reported that differed from the one known. */
  let genesisHeard: string | undefined

  function memberAtHead(top: bigint | undefined) {
    return pool.members.find((each) => each.isInUse() && each.head === top)
  }

  function askGenesis(again: boolean): Promise<void> {
    if (genesisAsked || (genesis !== undefined && !again)) return genesisAsked ?? Promise.resolve()
    const member = memberAtHead(pool.membersHead())
    if (!member) return Promise.resolve()
    genesisAsked = fetchBlock(member.upstream, genesisBlockBody, options.timeoutMs)
      .then(
        (block) => {
          const hash = block?.hash
          if (typeof hash !== 'string' || hash === genesis) return
          const before = genesis
          genesis = hash
          if (before !== undefined) options.onNewChain(hash, before)
        },
        () => undefined,
      )
      .finally(() => {
        genesisAsked = undefined
      })
    return genesisAsked
  }

  function takeFinalized(number: bigint): void {
    finalized = number
    if (finalizedMark === undefined || finalized > finalizedMark) finalizedMark = finalized
  }

  return {
    finalized: () => finalized,
    finalizedMark: () => finalizedMark,
    genesis: () => genesis,
    askFinalized(force) {
      const top = pool.membersHead()
      if (finalizing || top === undefined) return finalizing ?? Promise.resolve()
      if (
        !force &&
        finalizedAsked &&
        (finalizedAsked.head === top || now() - finalizedAsked.at < finalizedEveryPolls * pollMs)
      )
        return Promise.resolve()
      const member = memberAtHead(top)
      if (!member) return Promise.resolve()
      finalizedAsked = { head: top, at: now() }
      finalizing = fetchBlock(member.upstream, finalizedBlockBody, options.timeoutMs)
        .then(
          (block) => {
            // the node's word, lower too: a dev chain's finalized block goes back with its head
            if (block) takeFinalized(BigInt(block.number))
          },
          // a node without the finalized tag: nothing is cached by number
          () => undefined,
        )
        .finally(() => {
          finalizing = undefined
        })
      return finalizing
    },
    askGenesis,
    noteFork(event) {
      if (finalized !== undefined && finalized >= event.from) {
        finalized = event.from > 0n ? event.from - 1n : undefined
        finalizedAsked = undefined
      }
      // what was kept as unchanging is dropped with a fork past finality: the mark starts again
      if (event.pastFinality) finalizedMark = finalized
      return event.from === 0n || event.deeper ? askGenesis(true) : undefined
    },
    hear(heardFinalized, heardGenesis) {
      if (heardFinalized !== undefined) takeFinalized(heardFinalized)
      // once per genesis heard: a node that answers another one is not asked on every report
      if (heardGenesis === undefined || heardGenesis === genesis || heardGenesis === genesisHeard) return
      genesisHeard = heardGenesis
      void askGenesis(true)
    },
  }
}
