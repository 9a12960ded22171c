import type { UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import type { PoolMember } from '../upstreams/PoolMember.ts'
import type { Header } from './createHeadChain.ts'

/** What the head tracker knows of one member's head and how it hears of it. */
export type HeadFollower = {
  member: PoolMember
  /** Its newHeads subscription; undefined when it has no WebSocket (then it is polled). */
  socket: UpstreamSocket | undefined
  /** The newest head it gave (a notification, or a poll's answer). */
  header: Header | undefined
  /** When its last notification came. */
  heardAt: number | undefined
  /**
   * The highest block number it gave: a lower head of its own is the chain going back only when it
   * had been at the chain's tip (a member that never got there is lagging, not rewound).
   */
  peak: bigint | undefined
  /**
   * Its header is a poll's answer (not a notification): only a poll says the chain went back, since
   * notifications of a reorg's new branch come lower than the head at first, and late ones can trail
   * a poll that already saw the branch's head.
   */
  polled: boolean
}

/**
 * The member the chain follows: the first in config order that is in use and within maxLagBlocks
 * of the network's head (`top`, the members' highest), so the chain does not flap between members
 * that see blocks at different moments; else the one with the highest head.
 */
export function getLeader(
  followers: readonly HeadFollower[],
  top: bigint | undefined,
  maxLagBlocks: bigint,
): HeadFollower | undefined {
  let highest: HeadFollower | undefined
  for (const follower of followers) {
    const { member, header } = follower
    if (!header) continue
    if (
      member.isInUse() &&
      member.head !== undefined &&
      (top === undefined || member.head + maxLagBlocks >= top)
    ) {
      return follower
    }
    if (!highest?.header || BigInt(header.number) > BigInt(highest.header.number)) highest = follower
  }
  return highest
}

/**
 * Whether the leader's head `number`, lower than the last head given to the chain (`lastNumber`),
 * is the chain going back: a poll's answer, no member in use higher (`top`, the members' highest),
 * and a member that had been at the tip now polled at or below it (a member that never got there is
 * lagging, even when the members ahead of it are out of use). Otherwise the leader is lagging, and
 * waited out.
 */
export function isGoingBack(
  followers: readonly HeadFollower[],
  leading: HeadFollower,
  number: bigint,
  lastNumber: bigint,
  top: bigint | undefined,
): boolean {
  return (
    leading.polled &&
    (top === undefined || number >= top) &&
    followers.some(
      (each) =>
        each.member.isInUse() &&
        (each.peak ?? 0n) >= lastNumber &&
        each.polled &&
        each.header !== undefined &&
        BigInt(each.header.number) <= number,
    )
  )
}
