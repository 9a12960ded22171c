import type { SharedHead } from '../cache/createSharedHeads.ts'
import type { Head, HeadTracker } from './HeadTracker.ts'

/**
 * A network's head, as every reader outside the head model reads it: the chain's newest block and
 * its finalized one (the head tracker's), and the highest block number clients have been shown.
 */
export type NetworkHead = {
  /** The network's head: its chain's newest block (number and gas limit), or undefined before the first one. */
  latest(): Head | undefined
  /** The network's finalized block number, or undefined while unknown (it goes back when the chain does). */
  finalized(): bigint | undefined
  /**
   * The hash of the chain's block at `number` (at or below latest), while the chain remembers it (its
   * newest 1,024 blocks): what an answer pinned to that number is kept under, until the block leaves.
   */
  hashAt(number: bigint): string | undefined
  /**
   * The highest block an upstream in use has reached: at or above `latest` (whose chain follows the
   * upstreams that keep up, up to maxLagBlocks behind the first); undefined before any is known.
   */
  reached(): bigint | undefined
  /**
   * What eth_blockNumber answers without asking a node: the chain's newest block number, unless the
   * shown head was lowered (by another instance) since the chain last moved: this instance's chain
   * has not seen that rewind yet, so undefined (a node is asked) until it does.
   */
  blockNumber(): bigint | undefined
  /** Asks every upstream for its head now; resolves when done. */
  poll(): Promise<void>
  /** The highest block number a client may be told: eth_blockNumber never answers less. */
  readonly shown: bigint
  /**
   * A number found for a client: when higher than `shown`, it becomes the shown head, at once or
   * (shared by many instances) once the promise settles; only then may it be told.
   */
  show(number: bigint): Promise<void> | undefined
  /**
   * A rewind of the chain itself that the in-sync upstreams agree on: `number` becomes the shown
   * head (lower than before), with Redis on every instance, and a number found before it is never
   * shown again (see SharedHead.lower). Settles when Redis took it.
   */
  lower(number: bigint): Promise<void>
  /** How many times the shown head was lowered (here, or by another instance): a number asked for before one is not shown. */
  readonly lowers: number
  close(): void
}

export type NetworkHeadOptions = {
  /** The shown head shared by every instance through Redis; undefined: this instance's own. */
  shared?: SharedHead | undefined
  /** The shown head was lowered, here or by another instance (the network drops its head-scoped answers). */
  onLower?: () => void
  /** The highest head among the upstreams in use (the pool's members' head). */
  reached?: () => bigint | undefined
}

/**
 * The one head view of a network, made from its head tracker: latest and finalized as the tracker
 * knows them, and the shown head, which follows the chain down when it goes back below it (a
 * rewind, a shorter branch). Make it before anything else subscribes to the tracker, so that the
 * shown head is lowered before the others hear of a fork.
 */
export function createNetworkHead(tracker: HeadTracker, options: NetworkHeadOptions = {}): NetworkHead {
  const shown = options.shared ?? createOwnShownHead()
  const stopHearingLowers = options.onLower && shown.onLower(options.onLower)
  /** The shown head's lowers when the chain last moved: one after it is another instance's, not seen here yet. */
  let loweredWhenMoved = shown.lowers
  const stopFollowing = tracker.subscribe((event) => {
    // the chain went back: a client may be told its lower head now
    if (event.kind === 'fork' && event.to < event.before && shown.shown > event.to) void shown.lower(event.to)
    loweredWhenMoved = shown.lowers
  })
  return {
    latest: tracker.latest,
    finalized: tracker.finalized,
    hashAt: tracker.hashAt,
    reached: options.reached ?? (() => tracker.latest()?.number),
    blockNumber() {
      if (shown.lowers !== loweredWhenMoved) {
        // look now: the chain follows the rewind at once, not at the next poll
        tracker.look()
        return undefined
      }
      return tracker.latest()?.number
    },
    poll: () => tracker.poll(),
    get shown() {
      return shown.shown
    },
    show(number) {
      // a client is told a block the chain has not heard of yet: the tracker looks now, so that the
      // chain knows it (and a rewind below it lowers what clients are told)
      const tip = tracker.latest()?.number
      if (tip !== undefined && number > tip) tracker.look()
      return shown.show(number)
    },
    lower: (number) => shown.lower(number),
    get lowers() {
      return shown.lowers
    },
    close() {
      stopFollowing()
      stopHearingLowers?.()
    },
  }
}

/** The shown head of a single instance: raised and lowered at once, nothing to wait for. */
function createOwnShownHead(): SharedHead {
  let shown = 0n
  let lowers = 0
  const listeners = new Set<() => void>()
  return {
    get shown() {
      return shown
    },
    get lowers() {
      return lowers
    },
    show(number) {
      if (number > shown) shown = number
      return undefined
    },
    lower(number) {
      shown = number
      lowers++
      for (const listener of listeners) listener()
      return Promise.resolve()
    },
    onLower(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}
