import type { PoolMember } from './createUpstreamPool.ts'

export type MemberRanking = {
  /**
   * The next member to try: the best untried one, else (unless `untriedOnly`) the best one that did
   * not answer for itself (`answered`: asking it again would get the same answer), else an open
   * member whose cooldown is over, which gets this call as its probe.
   */
  pick(
    headSensitive: boolean,
    tried: readonly PoolMember[] | undefined,
    untriedOnly: boolean,
    answered: Set<PoolMember> | undefined,
  ): PoolMember | undefined
  /** Whether a member other than `member` is left to try (read just after `pick`). */
  hasOther(headSensitive: boolean, member: PoolMember, tried: readonly PoolMember[] | undefined): boolean
  /** The highest head among members in use (undefined before any is known). */
  head(): bigint | undefined
  /** A member changed class (breaker, error rate, head): rank again before the next pick. */
  invalidate(): void
}

/**
 * A pool's members in order of preference: those in use (breaker closed), the healthy (error rate
 * at most one half) before the others, then config order; for head-sensitive calls, without those
 * more than `maxLagBlocks` behind the network's head, and those at the head first. Rankings are
 * recomputed when a member changes class, not per call.
 */
export function createMemberRanking(
  members: readonly PoolMember[],
  maxLagBlocksNumber: number,
): MemberRanking {
  const maxLagBlocks = BigInt(maxLagBlocksNumber)
  let ranked: readonly PoolMember[] = members
  let rankedAtHead: readonly PoolMember[] = members
  let dirty = true
  let networkHead: bigint | undefined

  function rank(): void {
    dirty = false
    networkHead = undefined
    for (const member of members) {
      if (member.breaker.state === 'closed' && member.head !== undefined) {
        if (networkHead === undefined || member.head > networkHead) networkHead = member.head
      }
    }
    const closed = members.filter((member) => member.breaker.state === 'closed')
    closed.sort((a, b) => Number(a.errorRate > 0.5) - Number(b.errorRate > 0.5) || a.priority - b.priority)
    ranked = closed
    const top = networkHead
    rankedAtHead =
      top === undefined
        ? closed
        : closed
            .filter((member) => member.head === undefined || top - member.head <= maxLagBlocks)
            // among equally healthy members, those at the head first, so that a client does not see
            // the head go backwards (the sort is stable: config order otherwise)
            .sort(
              (a, b) =>
                Number(a.errorRate > 0.5) - Number(b.errorRate > 0.5) ||
                Number(a.head !== top) - Number(b.head !== top),
            )
  }

  function pick(
    headSensitive: boolean,
    tried: readonly PoolMember[] | undefined,
    untriedOnly: boolean,
    answered: Set<PoolMember> | undefined,
  ) {
    if (dirty) rank()
    const order = headSensitive ? rankedAtHead : ranked
    for (const member of order) if (!tried?.includes(member)) return member
    if (untriedOnly) return undefined
    for (const member of order) if (!answered?.has(member)) return member
    // members are in config order: the first open one whose cooldown is over
    return members.find((member) => !tried?.includes(member) && member.breaker.claimProbe())
  }

  function hasOther(
    headSensitive: boolean,
    member: PoolMember,
    tried: readonly PoolMember[] | undefined,
  ): boolean {
    for (const each of headSensitive ? rankedAtHead : ranked) {
      if (each !== member && !tried?.includes(each)) return true
    }
    return false
  }

  return {
    pick,
    hasOther,
    head() {
      if (dirty) rank()
      return networkHead
    },
    invalidate() {
      dirty = true
    },
  }
}
