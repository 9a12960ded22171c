import { performance } from 'node:perf_hooks'
import { type Logger, pino } from 'pino'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { callUpstream } from '../upstreams/callUpstream.ts'
import { createHealthProber } from '../upstreams/createHealthProber.ts'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { createUpstreamSocket, type UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import { type BlockSummary, isBlock, isQuantity } from '../upstreams/fetchBlock.ts'
import { createChainAnchors } from './createChainAnchors.ts'
import { createHeadChain, type HeadEvent, type Header } from './createHeadChain.ts'
import { createHeadSource, type HeadFleet } from './createHeadSource.ts'
import { createPollRhythm } from './createPollRhythm.ts'
import { getLeader, type HeadFollower, isGoingBack } from './HeadFollower.ts'
import type { HeadReport } from './HeadReport.ts'
import type { Head, HeadStats, HeadTracker } from './HeadTracker.ts'
import { isHeader, toHeader } from './toHeader.ts'

export type HeadTrackerOptions = {
  /** Each pool member's WebSocket URL (same order as the members), or undefined: that one is polled. */
  wsUrls: readonly (string | undefined)[]
  /** How often members without a live newHeads subscription (or not well) are asked for their head. */
  pollMs: number
  /** One head request's wait. */
  timeoutMs: number
  /** Members further behind the network's head than this do not lead the chain of heads. */
  maxLagBlocks: number
  /** How long a request on an upstream WebSocket may wait before that connection is dropped. */
  requestTimeoutMs: number
  log?: Logger
  now?: () => number
  timers?: Timers
  /** Opens a member's WebSocket (tests give a fake). */
  openSocket?: (url: string) => UpstreamSocket
  /**
   * The fleet this network's head polls are shared with (instances on one Redis): only the lease
   * holder polls, the others follow its reports (createHeadSource). Undefined: this instance polls.
   */
  fleet?: HeadFleet | undefined
  /** The members' keys among the fleet (toMemberKeys), in the members' order. */
  memberKeys?: readonly string[]
}

/**
 * The one loop per network that asks upstreams for their head. It follows every member: over its
 * WebSocket's newHeads where it has one, and by a poll of its latest block every pollMs, the
 * leader without live newHeads also on the chain's rhythm around each block's moment (a poll is
 * its health check, createHealthProber's, recorded on the member: an answer brings it back, a
 * failure opens its breaker; and a rewind sends no notification). From what it hears:
 * each member's head for the pool's lag ranking, the finalized block (the cache) and the genesis
 * block (the chain's identity) through createChainAnchors, and the network's one chain of heads
 * (createHeadChain), led by the best member, which moves back as well as forward: its tip is the
 * network's head (eth_blockNumber's floor, the gas cap's gas limit), its events (HeadEvent) drive
 * subscriptions, the cache and the fee indexer. A lower head from the leader is a rewind when no
 * member in use is higher and the leader had been at the tip (isGoingBack); otherwise it is the
 * leader lagging, and waited out. In a fleet, only the lease holder polls on the head's rhythm; the
 * others feed their chain the holder's reports (createHeadSource), and their chain still fetches
 * gaps and walks reorgs from the node itself.
 */
export function createHeadTracker(pool: UpstreamPool, options: HeadTrackerOptions): HeadTracker {
  const { pollMs } = options
  const log = options.log ?? pino({ level: 'silent' })
  const now = options.now ?? (() => performance.now())
  const timers = options.timers ?? systemTimers
  const maxLagBlocks = BigInt(options.maxLagBlocks)
  const openSocket =
    options.openSocket ??
    ((url: string) =>
      createUpstreamSocket({
        urls: [url],
        requestTimeoutMs: options.requestTimeoutMs,
        onError: (err, label) =>
          log.warn({ err: (err as Error).message, upstream: label }, 'upstream WebSocket error'),
      }))
  const prober = createHealthProber({ pollMs, timeoutMs: options.timeoutMs, now })
  const rhythm = createPollRhythm({ pollMs })
  const listeners = new Set<(event: HeadEvent) => void>()
  /** The chain's tip as a Head, kept for the header it was read from (read on the request path). */
  let latest: { header: Header; head: Head } | undefined
  /** The gas limit of the last block heard of whose gas limit reads as a number. */
  let gasLimit: bigint | undefined
  const stats: HeadStats = { forks: 0, pastFinality: 0, newChains: 0 }
  const anchors = createChainAnchors(pool, {
    pollMs,
    timeoutMs: options.timeoutMs,
    now,
    onNewChain(genesis, before) {
      stats.newChains++
      log.warn(
        { genesis, before },
        'a new chain under the same chain id (its genesis block changed: a restarted devnet, a reset node): everything cached is dropped',
      )
      announce({ kind: 'newChain', genesis })
    },
  })
  let polling: Promise<void> | undefined
  /** When look() last asked. */
  let lookedAt: number | undefined
  let timer: unknown
  let closed = false
  /** The fields of the upstreams' own newHeads objects, in their order, once one has come. */
  let headerFields: string[] | undefined
  /** The last head given to the chain. */
  let fed: Header | undefined
  /** The block the last poll answered, whole. */
  let lastPolled: BlockSummary | undefined

  const chain = createHeadChain({
    fetchBlock: async (method, id) => {
      const block = await callUpstream<unknown>(pool, method, [id, false])
      if (block === null) return null
      if (!isBlock(block) || !isHeader(block) || typeof block.parentHash !== 'string')
        throw new Error(`${method} ${id}: an answer that is not a block`)
      return toHeader(block, headerFields)
    },
    emit(event) {
      if (event.kind === 'fork') noteFork(event)
      // this instance's cache first (it keeps the polled latest block): then the followers hear of it
      announce(event)
      source.heard(event, chain.tip())
    },
    onError: (err) => log.warn({ err }, 'could not follow a new head; waiting for the next one'),
    finalized: anchors.finalizedMark,
  })

  const source = createHeadSource({
    fleet: options.fleet,
    members: pool.members,
    memberKeys: options.memberKeys ?? [],
    tip: () => chain.tip(),
    known: () => ({ finalized: anchors.finalized(), genesis: anchors.genesis(), gasLimit }),
    follow,
    now,
    log,
    // polling again after following: old poll answers must not lead the chain (notifications, still heard, may)
    onPolling: () => {
      for (const follower of followers) if (follower.polled) follower.header = undefined
    },
  })

  /** The holder's report, while this instance follows: its anchors and its head. */
  function follow(report: HeadReport): void {
    if (closed) return
    if (report.gasLimit !== undefined) gasLimit = report.gasLimit
    anchors.hear(report.finalized, report.genesis)
    if (report.header.hash === fed?.hash) return
    fed = report.header
    chain.accept(report.header, report.goesBack)
  }

  function announce(event: HeadEvent): void {
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (err) {
        log.error({ err }, 'head listener failed')
      }
    }
  }

  /**
   * The chain left blocks: counted and logged; finalized and genesis follow (ChainAnchors.noteFork). A
   * fork that may be a new chain (a restarted devnet) is logged once its genesis says it is not one
   * (a new genesis is a new chain: onNewChain says so).
   */
  function noteFork(event: HeadEvent & { kind: 'fork' }): void {
    stats.forks++
    if (event.pastFinality) stats.pastFinality++
    const to = chain.tip()
    const [finalized, genesis] = [anchors.finalizedMark(), anchors.genesis()]
    const logFork = () => {
      log.info(
        { from: event.from, head: to === undefined ? undefined : Number(to.number), deeper: event.deeper },
        'the chain left blocks it had (a reorg or a rewind): answers from them are dropped',
      )
      if (event.pastFinality)
        log.warn(
          { from: event.from, finalized },
          'blocks at or below the finalized one changed: cached answers pinned to blocks are dropped',
        )
    }
    const checked = anchors.noteFork(event)
    if (checked)
      void checked.then(() => (genesis === anchors.genesis() || genesis === undefined) && logFork())
    else logFork()
  }

  const followers: HeadFollower[] = pool.members.map((member, index) => {
    const url = options.wsUrls[index]
    const follower: HeadFollower = {
      member,
      socket: undefined,
      header: undefined,
      heardAt: undefined,
      peak: undefined,
      polled: false,
    }
    if (url !== undefined) {
      follower.socket = openSocket(url)
      // after a reconnect, its latest block fills what was missed even if no new block comes soon
      follower.socket.subscribe(
        ['newHeads'],
        (result) => hearNotification(follower, result),
        () => void pollMember(follower).then(() => feedChain()),
      )
    }
    return follower
  })

  function hearNotification(follower: HeadFollower, result: unknown): void {
    if (!isBlock(result) || !isHeader(result)) return
    follower.heardAt = now()
    headerFields = Object.keys(result)
    follower.member.noteNotifiedHead(BigInt(result.number), follower.heardAt)
    observe(follower, result, false)
    if (!source.polls()) return
    feedChain()
    void anchors.askFinalized(false)
  }

  /** A head from a member: its own (the chain's when it leads, fed by the caller). */
  function observe(follower: HeadFollower, block: BlockSummary, polled: boolean): void {
    if (isQuantity(block.gasLimit)) gasLimit = BigInt(block.gasLimit)
    if (!isHeader(block)) return
    const number = BigInt(block.number)
    if (follower.peak === undefined || number > follower.peak) follower.peak = number
    follower.header = toHeader(block, headerFields)
    follower.polled = polled
  }

  /** The member the chain follows (getLeader). */
  function leader(): HeadFollower | undefined {
    return getLeader(followers, pool.membersHead(), maxLagBlocks)
  }

  /**
   * The leader's head goes to the chain: a higher one or one at the same height; a lower one only as
   * the chain going back (isGoingBack), when the chain then asks the node whether its tip is gone.
   * Not while this instance follows the fleet (`force`: a poll asked for, the first head at start).
   */
  function feedChain(force = false): void {
    if (!force && !source.polls()) return
    const leading = leader()
    const header = leading?.header
    if (!leading || !header || header === fed) return
    // against the last head given (it may wait to be linked), not only the chain's tip
    const last = fed ?? chain.tip()
    let goesBack = false
    if (last) {
      const number = BigInt(header.number)
      const lastNumber = BigInt(last.number)
      if (number < lastNumber) {
        goesBack = isGoingBack(followers, leading, number, lastNumber, pool.membersHead())
        if (!goesBack) return
      }
    }
    fed = header
    chain.accept(header, goesBack)
  }

  /** One poll: the member's health check (createHealthProber), whose block is its head here too. */
  async function pollMember(follower: HeadFollower): Promise<void> {
    const checked = await prober.check(follower.member)
    if (!checked || closed) return
    // a notification that came while this answer was on its way is newer than it, whatever its number
    if (follower.heardAt !== undefined && follower.heardAt > checked.sentAt) return
    if (follower === leader()) rhythm.heard(checked.sentAt, checked.block)
    observe(follower, checked.block, true)
    lastPolled = checked.block
    // the first head waits for the round (feedChain after it): not the head of whichever member
    // answered first, which may be one lagging behind the others
    if (chain.tip()) feedChain()
  }

  /**
   * A member to poll this round: each one once per pollMs, a subscribed one too (a poll is its health
   * check, and a rewind sends no notification; its newHeads come in between), and the leader at the
   * chain's rhythm (`quick`: this round is its quick poll).
   */
  function needsPoll(follower: HeadFollower, quick: HeadFollower | undefined): boolean {
    // following another instance's reports: only the members its reports do not cover
    if (!source.polls()) return prober.isDue(follower.member) && source.checks(follower.member)
    return follower === quick || prober.isDue(follower.member)
  }

  /** `force`: asked for (at start, by a reader): the whole round, followed or not. */
  function pollEach(due: HeadFollower[], force: boolean): Promise<void> {
    polling ??= Promise.all(due.map(pollMember))
      .then(() => feedChain(force))
      .then(() =>
        force || source.polls()
          ? Promise.all([anchors.askFinalized(force), anchors.askGenesis(false)]).then(source.polled)
          : undefined,
      )
      .then(() => undefined)
      .finally(() => {
        polling = undefined
      })
    return polling
  }

  /**
   * The leader when it is heard of by polls only (no live newHeads) by this instance's own polls (not
   * following another's): polled on the chain's rhythm.
   */
  function polledLeader(): HeadFollower | undefined {
    if (!source.polls()) return undefined
    const leading = leader()
    return leading?.socket?.connected() ? undefined : leading
  }

  /**
   * The next round's wait, and whether it is the leader's quick poll: each member is polled when
   * due (pollMs); a leader heard of by polls only also on the chain's rhythm (createPollRhythm:
   * around the moment its next block is due).
   */
  function nextRound(): { delayMs: number; quick: boolean } {
    const at = now()
    const quickAt = polledLeader() ? rhythm.nextPollAt(at) : undefined
    return quickAt !== undefined && quickAt - at < pollMs
      ? { delayMs: quickAt - at, quick: true }
      : { delayMs: pollMs, quick: false }
  }

  function schedule(): void {
    if (closed) return
    const { delayMs, quick } = nextRound()
    timer = timers.setTimeout(() => {
      const leading = quick ? polledLeader() : undefined
      pollEach(
        followers.filter((each) => needsPoll(each, leading)),
        false,
      )
        .catch((err) => log.error({ err }, 'head poll failed'))
        .finally(schedule)
    }, delayMs)
    ;(timer as { unref?: () => void }).unref?.()
  }
  schedule()

  function header(): Header | undefined {
    return chain.tip() ?? leader()?.header
  }

  return {
    latest() {
      const tip = header()
      if (!tip || gasLimit === undefined) return undefined
      if (latest?.header !== tip || latest.head.gasLimit !== gasLimit) {
        latest = { header: tip, head: { number: BigInt(tip.number), gasLimit } }
      }
      return latest.head
    },
    finalized: anchors.finalized,
    header,
    hashAt: (number) => chain.at(number)?.hash,
    hasBlock: (hash) => chain.has(hash),
    polledBlock: (hash) => (lastPolled?.hash === hash ? lastPolled : undefined),
    genesis: anchors.genesis,
    stats,
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    // a poll under way may have begun before the caller's reason to ask: a fresh one after it
    poll: () => (polling ?? Promise.resolve()).then(() => pollEach(followers, true)),
    look() {
      const at = now()
      // a follower hears the holder's next head without asking
      if (!source.polls()) return
      if (polling || (lookedAt !== undefined && at - lookedAt < pollMs / 2)) return
      lookedAt = at
      pollEach(followers, false).catch((err) => log.error({ err }, 'head poll failed'))
    },
    close() {
      closed = true
      source.close()
      prober.close()
      timers.clearTimeout(timer)
      listeners.clear()
      chain.reset()
      for (const follower of followers) follower.socket?.close()
    },
  }
}
