/**
 * What one chain's shared answers are read and kept under: the chain's identity (its genesis hash)
 * and the epoch every instance is in. While `keyBase` is undefined (the epoch not read yet, or a
 * forget not yet made in Redis), lookups are misses and nothing is kept.
 */
export type ChainEpoch = {
  readonly chainId: number
  readonly genesis: string
  /** `<keyPrefix>cache:<chainId>:<genesis>:<epoch>:` while the epoch is known. */
  readonly keyBase: string | undefined
  /** Settles once the first reading of the epoch answered or failed (never rejects). */
  readonly ready: Promise<void>
}

export type SharedEpochsOptions = {
  keyPrefix: string
  /** The chain's epoch as Redis keeps it (`0` when none); undefined when Redis failed (never rejects). */
  read(chainId: number, genesis: string): Promise<string | undefined>
  /** Moves the chain to a new epoch in Redis and announces it; the new epoch, or undefined when Redis failed. */
  move(chainId: number, genesis: string): Promise<string | undefined>
}

type EpochRecord = {
  chainId: number
  genesis: string
  keyBase: string | undefined
  ready: Promise<void>
  epoch: string | undefined
  /** Bumped by every announcement and forget: a reading sent before one of them is out of date. */
  changes: number
  /** A forget not yet made in Redis (Redis away or failing): tried again on every refresh. */
  forgetting: Promise<void> | undefined
  failedForget: boolean
  /** The newest epoch announced while forgetting (our own move's announcement may come before its answer). */
  heard: string | undefined
  /** The stores reading this chain: told when entries they may have kept are no longer the chain's. */
  listeners: Set<() => void>
}

const epochPattern = /^\d{1,20}$/

/**
 * The epochs of the chains this instance shares answers of (docs/operations.md "The shared cache"). A
 * forget (a block at or below finalized changed: "immutable" did not hold) moves every instance to a
 * new epoch of that chain: its entry keys change, so no instance reads an answer kept before it.
 * An epoch is Redis's time (µs) at the move, or one more than the kept one: unique over time, so an
 * epoch key that expired or a Redis that lost its data never brings an old epoch back. An instance
 * reads the epoch when it learns the chain's identity, on every reconnection and on `refresh`
 * (every few seconds), and follows the announcements between.
 */
export function createSharedEpochs(options: SharedEpochsOptions) {
  const { keyPrefix } = options
  const records = new Map<string, EpochRecord>()

  function settle(record: EpochRecord, epoch: string): void {
    const before = record.epoch
    record.epoch = epoch
    record.keyBase = `${keyPrefix}cache:${record.chainId}:${record.genesis}:${epoch}:`
    // entries kept in memory from an epoch this instance was in are no longer the chain's
    if (before !== undefined && before !== epoch) for (const listener of record.listeners) listener()
  }

  async function read(record: EpochRecord): Promise<void> {
    if (record.forgetting) return
    const changes = record.changes
    const epoch = await options.read(record.chainId, record.genesis)
    // an announcement or a forget since it was sent is newer than this reading
    if (epoch === undefined || !epochPattern.test(epoch) || changes !== record.changes) return
    if (record.forgetting) return
    settle(record, epoch)
  }

  function move(record: EpochRecord): Promise<void> {
    const moving = options.move(record.chainId, record.genesis).then((epoch) => {
      if (record.forgetting !== moving) return
      if (epoch === undefined || !epochPattern.test(epoch)) {
        // kept as a forget to make: entries stay misses until it is made
        record.failedForget = true
        return
      }
      record.forgetting = undefined
      record.failedForget = false
      const heard = record.heard
      record.heard = undefined
      settle(record, heard !== undefined && BigInt(heard) > BigInt(epoch) ? heard : epoch)
    })
    record.forgetting = moving
    record.failedForget = false
    return moving
  }

  return {
    /** The chain's epoch record for a store of it; `listener` hears when entries kept before are not the chain's. */
    join(chainId: number, genesis: string, listener: () => void): ChainEpoch {
      const id = `${chainId}:${genesis}`
      let record = records.get(id)
      if (!record) {
        const created: EpochRecord = {
          chainId,
          genesis,
          keyBase: undefined,
          ready: Promise.resolve(),
          epoch: undefined,
          changes: 0,
          forgetting: undefined,
          failedForget: false,
          heard: undefined,
          listeners: new Set(),
        }
        created.ready = read(created)
        records.set(id, created)
        record = created
      }
      record.listeners.add(listener)
      return record
    },
    /**
     * A store no longer reads the chain (it learned a new genesis): the record goes with its last
     * store, so a dev chain restarted again and again leaves none behind. A forget of the old chain
     * not yet made in Redis goes with it: no instance that learned the new genesis reads its keys.
     */
    leave(epoch: ChainEpoch, listener: () => void): void {
      const id = `${epoch.chainId}:${epoch.genesis}`
      const record = records.get(id)
      if (!record) return
      record.listeners.delete(listener)
      if (record.listeners.size === 0) records.delete(id)
    },
    /**
     * Moves every instance to a new epoch of the chain: at once here (lookups miss, nothing is kept,
     * the listeners hear it), in Redis as soon as it answers (tried again on every refresh while it
     * fails). Settles when Redis answered (never rejects).
     */
    forget(epoch: ChainEpoch): Promise<void> {
      const record = records.get(`${epoch.chainId}:${epoch.genesis}`)
      if (!record) return Promise.resolve()
      record.changes++
      record.keyBase = undefined
      // the next epoch settled is news to no one here
      record.epoch = undefined
      for (const listener of record.listeners) listener()
      return move(record)
    },
    /** An epoch announced on the channel (by any instance, this one included). */
    heard(chainId: number, genesis: string, epoch: string): void {
      const record = records.get(`${chainId}:${genesis}`)
      if (!record || !epochPattern.test(epoch)) return
      record.changes++
      if (record.forgetting) {
        if (record.heard === undefined || BigInt(epoch) > BigInt(record.heard)) record.heard = epoch
        return
      }
      settle(record, epoch)
    },
    /** Reads every chain's epoch again, and makes the forgets Redis did not take yet. */
    refresh(): void {
      for (const record of records.values()) {
        if (record.listeners.size === 0) continue
        if (record.forgetting && record.failedForget) void move(record)
        else void read(record)
      }
    },
  }
}
