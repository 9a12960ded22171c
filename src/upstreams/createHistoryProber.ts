import type { Logger } from 'pino'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { attemptUpstream } from './attemptUpstream.ts'
import type { UpstreamPool } from './createUpstreamPool.ts'
import type { PoolMember } from './PoolMember.ts'

export type HistoryProber = {
  /**
   * The probe at start, then one every intervalMs: resolves when the first is done. Nothing when
   * probes are off (intervalMs 0) or the pool has one upstream (nothing to route).
   */
  start(): Promise<void>
  /** Probes every member now (or joins the probe under way); resolves when done (a member that could not be told keeps what was known). */
  probe(): Promise<void>
  close(): void
}

export type HistoryProberOptions = {
  /**
   * How often each member is probed again (a pruned node's window moves up with its head); 0: not
   * on a timer, not even at start. A member whose refusal taught the pool something is probed at once.
   */
  intervalMs: number
  /** One probe request's wait. */
  timeoutMs: number
  /** Most requests one member's probe makes for each of state and blocks (the search stops there, on the safe side). */
  maxCalls?: number
  log?: Logger
  timers?: Timers
}

/** The transactions root of a block without transactions. */
const emptyTrieRoot = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'

/**
 * A block's header without its transactions (a node that keeps the headers of blocks whose bodies,
 * receipts and logs it dropped: anvil's `--transaction-block-keeper`): it does not have the block.
 */
function isHeaderOnly(block: object): boolean {
  const { transactions, transactionsRoot } = block as { transactions?: unknown; transactionsRoot?: unknown }
  return (
    Array.isArray(transactions) &&
    transactions.length === 0 &&
    typeof transactionsRoot === 'string' &&
    transactionsRoot !== emptyTrieRoot
  )
}

/** Has it (true), does not (false), or could not be told (undefined: the probe of this member stops). */
type Probe = (member: PoolMember, block: bigint) => Promise<boolean | undefined>

const defaultMaxCalls = 24
/** A node's answer that it does not have the block or its state. */
const missing = Symbol('missing')
/** Whose balance the state probe asks for: any account has a balance at every block a node keeps state for. */
const zeroAddress = `0x${'0'.repeat(40)}`

/**
 * Finds, for each member of a pool, the earliest block whose state it serves and the earliest block
 * it has (member.earliestState, member.earliestBlock), for routing calls pinned to a block
 * (createMemberRanking's hasBlock): at start and every intervalMs, a binary search between block 0
 * and the member's head with eth_getBalance (state) and eth_getBlockByNumber (blocks, from block 1:
 * a header without its transactions is a block it lacks, as its receipts and logs), at most
 * maxCalls requests each, starting from what it found last time (two requests when nothing moved).
 * A refusal in between raises what the pool knows at once (PoolMember's learnMissing), and
 * has that member probed at once. A pool of one upstream is not probed: it has no other to route
 * to. Off the request path: calls only read the fields.
 */
export function createHistoryProber(pool: UpstreamPool, options: HistoryProberOptions): HistoryProber {
  const timers = options.timers ?? systemTimers
  const maxCalls = options.maxCalls ?? defaultMaxCalls
  let timer: unknown
  let closed = false
  let running: Promise<void> | undefined
  /** Members probed on their own (after a refusal), not twice at once. */
  const probing = new Set<PoolMember>()

  async function ask(member: PoolMember, method: string, params: unknown[]): Promise<unknown> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    const verdict = await attemptUpstream(member.upstream, body, options.timeoutMs)
    // a node's own "I do not have it" (pruned, not synced): missing data, blamed as `degraded`
    if (!('answer' in verdict)) return verdict.blame === 'degraded' ? missing : undefined
    const answer = JSON.parse(verdict.answer.toString()) as { result?: unknown }
    return 'result' in answer ? answer.result : undefined
  }

  const hasState: Probe = async (member, block) => {
    const result = await ask(member, 'eth_getBalance', [zeroAddress, `0x${block.toString(16)}`])
    return result === missing ? false : typeof result === 'string' ? true : undefined
  }

  const hasBlock: Probe = async (member, block) => {
    const result = await ask(member, 'eth_getBlockByNumber', [`0x${block.toString(16)}`, false])
    if (result === missing || result === null) return false
    return typeof result === 'object' ? !isHeaderOnly(result) : undefined
  }

  /**
   * The earliest block for which `has` holds, between 0 and `head` (where it must hold): 0 when it
   * holds at `first`, else exact within maxCalls requests, else the lowest block found to hold
   * (never one the node lacks).
   */
  async function earliest(
    member: PoolMember,
    head: bigint,
    has: Probe,
    known: bigint | undefined,
    first: bigint,
  ): Promise<bigint | undefined> {
    if (head < first) return 0n
    // lacking: a block known to be missing (-1: none); having: one known to be there
    let lacking = -1n
    let having = head
    let calls = 0
    if (known !== undefined && known > first && known <= head) {
      // where it was last time: there, and missing just below it (nothing moved), is two requests
      calls++
      const atKnown = await has(member, known)
      if (atKnown === undefined) return undefined
      if (atKnown) {
        calls++
        const below = await has(member, known - 1n)
        if (below === undefined) return undefined
        if (!below) return known
        having = known - 1n
      } else lacking = known
    } else {
      calls++
      const atFirst = await has(member, first)
      if (atFirst === undefined) return undefined
      if (atFirst) return 0n
      lacking = first
    }
    if (having === head) {
      calls++
      if ((await has(member, head)) !== true) return undefined
    }
    while (having - lacking > 1n && calls < maxCalls) {
      const middle = lacking + (having - lacking) / 2n
      calls++
      const atMiddle = await has(member, middle)
      if (atMiddle === undefined) return undefined
      if (atMiddle) having = middle
      else lacking = middle
    }
    return having
  }

  async function probeMember(member: PoolMember): Promise<void> {
    let head = member.head
    if (head === undefined) {
      const number = await ask(member, 'eth_blockNumber', [])
      if (typeof number !== 'string') return
      head = BigInt(number)
    }
    const state = await earliest(member, head, hasState, member.earliestState, 0n)
    if (state !== undefined) member.noteEarliestState(state)
    // from block 1: every node keeps the genesis block (geth's history expiry too)
    const blocks = await earliest(member, head, hasBlock, member.earliestBlock, 1n)
    if (blocks !== undefined) member.noteEarliestBlock(blocks)
    options.log?.debug(
      { upstream: member.upstream.label, head, earliestState: state, earliestBlock: blocks },
      'history probed',
    )
  }

  function probe(): Promise<void> {
    running ??= Promise.all(
      pool.members.map((member) =>
        probeMember(member).catch((err: Error) =>
          options.log?.debug({ upstream: member.upstream.label, err: err.message }, 'history probe failed'),
        ),
      ),
    ).then(() => {
      running = undefined
    })
    return running
  }

  // a refusal taught the pool where a member's history starts: the rest of it is probed now, so
  // that the next calls for blocks just above do not each meet a refusal of their own
  pool.watchHistory((member) => {
    if (closed || probing.has(member) || pool.members.length < 2) return
    probing.add(member)
    void probeMember(member)
      .catch(() => undefined)
      .finally(() => probing.delete(member))
  })

  function schedule(): void {
    if (closed) return
    timer = timers.setTimeout(() => {
      void probe().then(schedule)
    }, options.intervalMs)
  }

  return {
    start() {
      // one upstream is asked whatever it has: nothing to route, nothing to probe
      if (closed || options.intervalMs <= 0 || pool.members.length < 2) return Promise.resolve()
      return probe().then(schedule)
    },
    probe,
    close() {
      closed = true
      timers.clearTimeout(timer)
    },
  }
}
