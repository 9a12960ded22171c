import type { PoolMember, UpstreamPool } from '../upstreams/createUpstreamPool.ts'

export type Head = { number: bigint; gasLimit: bigint }

export type HeadTracker = {
  /** The highest head seen across upstreams, or undefined before the first successful poll. */
  latest(): Head | undefined
  /** The network's finalized block number, or undefined while unknown. */
  finalized(): bigint | undefined
  /** Polls every upstream now; resolves when done (failures open the member's breaker). */
  poll(): Promise<void>
  close(): void
}

export type HeadTrackerOptions = { pollMs: number; timeoutMs: number; onError?: (err: unknown) => void }

const blockBody = (tag: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [tag, false] })
const latestBlockBody = blockBody('latest')
const finalizedBlockBody = blockBody('finalized')

type BlockSummary = { number: string; gasLimit: string }

/**
 * Follows each upstream's head in the background: the pool's health and lag ranking (a member that
 * answers is healthy again, one that does not is kept off), the finalized block for the cache, and
 * the latest block's gas limit for the eth_call / eth_estimateGas gas cap. Requests only read what
 * it found.
 */
export function createHeadTracker(pool: UpstreamPool, options: HeadTrackerOptions): HeadTracker {
  let latest: Head | undefined
  let finalized: bigint | undefined
  let polling: Promise<void> | undefined

  /** The block, or null when the node answered without one; throws when it did not answer (HTTP, JSON). */
  async function fetchBlock(member: PoolMember, body: string): Promise<BlockSummary | null> {
    const response = await member.upstream.post(body, { timeoutMs: options.timeoutMs })
    if (response.status < 200 || response.status >= 300) throw new Error(`HTTP ${response.status}`)
    let answer: { result?: BlockSummary | null }
    try {
      answer = JSON.parse(response.body.toString())
    } catch {
      throw new Error('an answer that is not JSON')
    }
    const block = answer.result
    return block && typeof block.number === 'string' && typeof block.gasLimit === 'string' ? block : null
  }

  async function pollMember(member: PoolMember): Promise<void> {
    let block: BlockSummary | null
    try {
      block = await fetchBlock(member, latestBlockBody)
    } catch (err) {
      pool.noteProbeFailure(member, (err as Error).message)
      return
    }
    // a node that answers without a block is alive, but says nothing of its head
    if (!block) return
    const head = { number: BigInt(block.number), gasLimit: BigInt(block.gasLimit) }
    pool.noteHead(member, head.number)
    if (latest === undefined || head.number >= latest.number) latest = head
  }

  /** Finalized from the best member at the head; it only ever moves forward. */
  async function pollFinalized(): Promise<void> {
    const top = pool.head()
    const member = pool.members.find((each) => each.breaker.state === 'closed' && each.head === top)
    if (!member) return
    try {
      const block = await fetchBlock(member, finalizedBlockBody)
      if (block && (finalized === undefined || BigInt(block.number) > finalized))
        finalized = BigInt(block.number)
    } catch {
      // a node without the finalized tag: nothing is cached by number
    }
  }

  function poll(): Promise<void> {
    polling ??= Promise.all(pool.members.map(pollMember))
      .then(pollFinalized)
      .finally(() => {
        polling = undefined
      })
    return polling
  }

  const timer = setInterval(() => poll().catch((err) => options.onError?.(err)), options.pollMs)
  timer.unref()

  return { latest: () => latest, finalized: () => finalized, poll, close: () => clearInterval(timer) }
}
