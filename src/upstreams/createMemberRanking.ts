import type { PoolMember } from './PoolMember.ts'

/**
 * The blocks a call is pinned to, `fromBlock`..`block` (one block: the same number twice), and what
 * it needs of them (a pool's call is one: no object per call). `block` undefined: the call is not pinned.
 */
export type BlockPin = {
  readonly block: bigint | undefined
  readonly fromBlock: bigint | undefined
  readonly needsState: boolean
}

export type MemberRanking = {
  /**
   * The next member to try: the best untried one, else (unless `untriedOnly`) the best one the call
   * may ask again (not in `notAgain`: one that answered for itself would answer the same, one that had
   * the call until its time ran out may still be at it), else an open
   * member whose cooldown is over, which gets this call as its probe. A call pinned to a block
   * (`pin`) goes only to members that have it (hasBlocks) while any member in use is known to.
   */
  pick(
    headSensitive: boolean,
    tried: readonly PoolMember[] | undefined,
    untriedOnly: boolean,
    notAgain: Set<PoolMember> | undefined,
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
 * members that have it (hasBlocks) by a look at each member's fields, no ranking of its own.
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
      if (member.isInUse() && member.head !== undefined) {
        if (networkHead === undefined || member.head > networkHead) networkHead = member.head
      }
    }
    const closed = members.filter((member) => member.isInUse())
    closed.sort((a, b) => Number(a.isDegraded()) - Number(b.isDegraded()) || a.priority - b.priority)
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
                Number(a.isDegraded()) - Number(b.isDegraded()) ||
                Number(a.head !== top) - Number(b.head !== top),
            )
  }

  function pick(
    headSensitive: boolean,
    tried: readonly PoolMember[] | undefined,
    untriedOnly: boolean,
    notAgain: Set<PoolMember> | undefined,
    pin?: BlockPin,
  ) {
    if (dirty) rank()
    const order = headSensitive ? rankedAtHead : ranked
    const held = pinnedIn(order, pin)
    for (const member of order) {
      if (!tried?.includes(member) && (held === undefined || hasBlocks(member, held))) return member
    }
    if (untriedOnly) return undefined
    for (const member of order) {
      if (!notAgain?.has(member) && (held === undefined || hasBlocks(member, held))) return member
    }
    // members are in config order: the first open one whose cooldown is over
    return members.find((member) => !tried?.includes(member) && member.claimProbe())
  }

  function hasOther(
    headSensitive: boolean,
    member: PoolMember,
    tried: readonly PoolMember[] | undefined,
    pin?: BlockPin,
  ): boolean {
    const order = headSensitive ? rankedAtHead : ranked
    const held = pinnedIn(order, pin)
    for (const each of order) {
      if (each === member || tried?.includes(each)) continue
      if (held === undefined || hasBlocks(each, held)) return true
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
 * Whether a member is known to have a pin's blocks (`needsState`: their state too): its head is
 * known and not below the last (`block`), and the earliest block (or state) it serves, where known,
 * is not above the first (`fromBlock`). A member whose head is not known yet (just started, not
 * answering its polls) is not asked for a pinned block while another one is known to have it.
 */
function hasBlocks(member: PoolMember, pin: BlockPin & { block: bigint }): boolean {
  if (member.head === undefined || pin.block > member.head) return false
  const earliest = pin.needsState ? member.earliestState : member.earliestBlock
  return earliest === undefined || (pin.fromBlock ?? pin.block) >= earliest
}

/**
 * The pin the members in `order` are held to: the call's while one of them is known to have its
 * blocks; undefined when the call is not pinned, or when none has them (the best one is asked anyway).
 */
function pinnedIn(
  order: readonly PoolMember[],
  pin: BlockPin | undefined,
): (BlockPin & { block: bigint }) | undefined {
  if (pin?.block === undefined) return undefined
  const pinned = pin as BlockPin & { block: bigint }
  for (const member of order) if (hasBlocks(member, pinned)) return pinned
  return undefined
}
