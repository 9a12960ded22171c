import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Redis } from 'ioredis'
import { announceHeld, type Leadership } from './leadership.ts'

/** A lease one part of this process holds a share of: the process lets go of it when the last share is released. */
export type RedisLease = Leadership & {
  /** This part no longer wants it: the last share released lets go of it in Redis at once (others take it at their next try). */
  release(): Promise<void>
}

export type RedisLeases = {
  /** A share of the lease `name` (one per process, shared by every part that asks for it). */
  lead(name: string): RedisLease
  /** Tries now the leases not held (another process just let one go). */
  check(): void
  /** Lets go of every lease (the next holders take them at their next try). */
  close(): Promise<void>
}

export type RedisLeasesOptions = {
  /** Keys are `<keyPrefix><name>`. */
  keyPrefix: string
  /** How long a lease lasts after its last renewal: a holder that died is replaced this long after. */
  leaseMs: number
  /** How often a held lease is renewed and one not held is tried. */
  checkMs: number
  now?: () => number
  onError(err: unknown): void
}

/**
 * Takes the lease (its key absent) or renews it (its key holds this process's token); 1 when held.
 * KEYS[1] the lease's key; ARGV: the token, the lease's length (ms).
 */
const takeScript = `
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`

/** Deletes the lease's key if this process holds it. KEYS[1] the lease's key; ARGV[1] the token. */
const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

type Lease = {
  name: string
  key: string
  held: boolean
  /** This process's clock: past it, a lease not renewed since may be another's. */
  heldUntil: number
  shares: number
  listeners: Set<(held: boolean) => void>
}

/**
 * Leases in Redis: a key per lease holding the holder's token, with an expiry. Every checkMs each
 * process renews the leases it holds and tries those it does not; a holder that stops deletes its
 * key, one that dies leaves it to expire (leaseMs). A holder that cannot reach Redis, or has not
 * renewed within leaseMs, counts itself as not holding (another may).
 */
export function createRedisLeases(redis: Redis, options: RedisLeasesOptions): RedisLeases {
  const { leaseMs } = options
  const now = options.now ?? (() => performance.now())
  const token = randomBytes(12).toString('base64url')
  const leases = new Map<string, Lease>()
  let checking = false
  let timer: NodeJS.Timeout | undefined

  const announce = (lease: Lease, held: boolean) => announceHeld(lease, held, options.onError)

  async function take(lease: Lease): Promise<void> {
    // away: not held (the caller falls back to doing the work itself, as every other process does)
    if (redis.status !== 'ready') {
      announce(lease, false)
      return
    }
    const sentAt = now()
    try {
      const held = (await redis.eval(takeScript, 1, lease.key, token, leaseMs)) === 1
      if (held) lease.heldUntil = sentAt + leaseMs
      if (leases.get(lease.name) === lease) announce(lease, held)
    } catch (err) {
      announce(lease, false)
      options.onError(err)
    }
  }

  async function check(): Promise<void> {
    if (checking) return
    checking = true
    try {
      await Promise.all([...leases.values()].map(take))
    } finally {
      checking = false
    }
  }

  /** Sent even when not held: a try sent before it (one connection: in order) may have taken it since. */
  async function letGo(lease: Lease): Promise<void> {
    announce(lease, false)
    lease.listeners.clear()
    if (redis.status !== 'ready') return
    await redis.eval(releaseScript, 1, lease.key, token).catch(options.onError)
  }

  return {
    lead(name) {
      let lease = leases.get(name)
      if (!lease) {
        lease = {
          name,
          key: `${options.keyPrefix}${name}`,
          held: false,
          heldUntil: 0,
          shares: 0,
          listeners: new Set(),
        }
        leases.set(name, lease)
        void take(lease)
      }
      if (!timer) {
        timer = setInterval(() => void check(), options.checkMs)
        timer.unref()
      }
      const own = lease
      own.shares++
      const mine = new Set<(held: boolean) => void>()
      let released = false
      return {
        held: () => own.held && now() < own.heldUntil,
        onChange(listener) {
          own.listeners.add(listener)
          mine.add(listener)
          return () => {
            own.listeners.delete(listener)
            mine.delete(listener)
          }
        },
        async release() {
          if (released) return
          released = true
          for (const listener of mine) own.listeners.delete(listener)
          if (--own.shares > 0) return
          leases.delete(own.name)
          await letGo(own)
        },
      }
    },
    check: () => void check(),
    async close() {
      clearInterval(timer)
      const all = [...leases.values()]
      leases.clear()
      await Promise.all(all.map(letGo))
    },
  }
}
