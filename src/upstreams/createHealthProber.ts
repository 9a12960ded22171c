import { type BlockSummary, fetchBlock } from './fetchBlock.ts'
import type { PoolMember } from './PoolMember.ts'

export type HealthProber = {
  /** Whether `member` is due a health check: it has had none, or none within pollMs. */
  isDue(member: PoolMember): boolean
  /**
   * One health check of `member` now: its latest block over HTTP, recorded on the member. An answer
   * with a block brings it back into use with that head (PoolMember.noteProbedHead), a failure takes
   * it out (noteProbeFailure); an answer without a block says it is alive, nothing more. Resolves
   * with the block and when it was asked for, or undefined (no block, or the prober is closed).
   */
  check(member: PoolMember): Promise<HealthCheck | undefined>
  /** Checks under way record nothing more of a member's head. */
  close(): void
}

export type HealthCheck = { block: BlockSummary; sentAt: number }

export type HealthProberOptions = {
  /** How often each member is due a check. */
  pollMs: number
  /** One check's wait. */
  timeoutMs: number
  now: () => number
}

/** A health check's question: the latest block (its head, and that it answers at all). */
export const latestBlockBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_getBlockByNumber',
  params: ['latest', false],
})

/**
 * The health checks of a pool's members: what one is, and what its outcome means for the member
 * (recorded on it, which tells its pool's ranking). When to check is the caller's: the head
 * tracker, whose polls are these checks, as a member's latest block is also its head for the chain
 * of heads (and a rewind sends no notification).
 */
export function createHealthProber(options: HealthProberOptions): HealthProber {
  const { now, pollMs } = options
  const checkedAt = new Map<PoolMember, number>()
  let closed = false
  return {
    isDue(member) {
      const at = checkedAt.get(member)
      return at === undefined || now() - at >= pollMs
    },
    async check(member) {
      const sentAt = now()
      checkedAt.set(member, sentAt)
      let block: BlockSummary | null
      try {
        block = await fetchBlock(member.upstream, latestBlockBody, options.timeoutMs)
      } catch (err) {
        member.noteProbeFailure((err as Error).message)
        return undefined
      }
      // a node that answers without a block is alive, but says nothing of its head
      if (!block || closed) return undefined
      member.noteProbedHead(BigInt(block.number), sentAt)
      return { block, sentAt }
    },
    close() {
      closed = true
    },
  }
}
