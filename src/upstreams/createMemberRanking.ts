import type { PoolMember } from './createUpstreamPool.ts'

/**
 * The block a call is pinned to and what it needs of it (a pool's call is one: no object per call).
 * `block` undefined: the call is not pinned.
 */
export type BlockPin = { readonly block: bigint | undefined; readonly needsState: boolean }

export type MemberRanking = {
  /**
   * The next member to try: the best untried one, else (unless `untriedOnly`) the best one that did
   * not answer for itself (`answered`: asking it again would get the same answer), else an open
   * member whose cooldown is over, which gets this call as its probe. A call pinned to a block
   * (`pin`) goes only to members that have it (hasBlock) while any member in use is known to.
   */
  pick(
    headSensitive: boolean,
    tried: readonly PoolMember[] | undefined,
    untriedOnly: boolean,
    answered: Set<PoolMember> | undefined,
    pin?: BlockPin,
  ): PoolMember | undefined
  /** Whether a member other than `member` is left to try (read just after `pick`). */
  hasOther(
    headSensitive: boolean,
    member: PoolMember,
    tried: readonly PoolMember[] | undefined,
    pin?: BlockPin,
  ): boolean
  /** The highest head among members in use (undefined before any is known). */
  head(): bigint | undefined
  /** A member changed class (breaker, error rate, head): rank again before the next pick. */
  invalidate(): void
}

/**
 * A pool's members in order of preference: those in use (breaker closed), the healthy (error rate
 * at most one half) before the others, then config order; for head-sensitive calls, without those
 * more than `maxLagBlocks` behind the network's head, and those at the head first. Rankings are
 * recomputed when a member changes class, not per call; a call pinned to a block is held to the
 * members that have it (hasBlock) by a look at each member's fields, no ranking of its own.
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
    pin?: BlockPin,
  ) {
    if (dirty) rank()
    const order = headSensitive ? rankedAtHead : ranked
    const block = pinnedIn(order, pin)
    const needsState = pin?.needsState === true
    for (const member of order) {
      if (!tried?.includes(member) && (block === undefined || hasBlock(member, block, needsState)))
        return member
    }
    if (untriedOnly) return undefined
    for (const member of order) {
      if (!answered?.has(member) && (block === undefined || hasBlock(member, block, needsState)))
        return member
    }
    // members are in config order: the first open one whose cooldown is over
    return members.find((member) => !tried?.includes(member) && member.breaker.claimProbe())
  }

  function hasOther(
    headSensitive: boolean,
    member: PoolMember,
    tried: readonly PoolMember[] | undefined,
    pin?: BlockPin,
  ): boolean {
    const order = headSensitive ? rankedAtHead : ranked
    const block = pinnedIn(order, pin)
    const needsState = pin?.needsState === true
    for (const each of order) {
      if (each === member || tried?.includes(each)) continue
      if (block === undefined || hasBlock(each, block, needsState)) return true
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

/**
 * Whether a member is known to have a block (`needsState`: its state too): its head is known and
 * not below it, and the earliest block (or state) it serves, where known, is not above it. A member
 * whose head is not known yet (just started, not answering its polls) is not asked for a pinned
 * block while another one is known to have it.
 */
function hasBlock(member: PoolMember, block: bigint, needsState: boolean): boolean {
  if (member.head === undefined || block > member.head) return false
  const earliest = needsState ? member.earliestState : member.earliestBlock
  return earliest === undefined || block >= earliest
}

/**
 * The pinned block the members in `order` are held to: the pin's block while one of them is known
 * to have it; undefined when the call is not pinned, or when none has it (the best one is asked anyway).
 */
function pinnedIn(order: readonly PoolMember[], pin: BlockPin | undefined): bigint | undefined {
  const block = pin?.block
  if (block === undefined) return undefined
  for (const member of order) if (hasBlock(member, block, pin?.needsState === true)) return block
  return undefined
}
