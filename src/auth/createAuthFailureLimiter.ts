import { toAddressGroup } from './toAddressGroup.ts'

export type AuthFailureLimiter = {
  /**
   * Milliseconds until this client may present a credential (secret or JWT) for this key again; 0:
   * it may now. Asked before anything is verified, so a refused client costs no hashing at all.
   */
  retryAfterMs(keyId: number, clientAddress: string | undefined): number
  /** Counts a wrong secret or JWT against the client's address and against the key. */
  recordFailure(keyId: number, clientAddress: string | undefined): void
}

export type AuthFailureLimiterOptions = {
  /** Failures allowed at once, per address and per key. */
  burst: number
  /** How fast that allowance comes back. */
  perMinute: number
  now?: () => number
  /** Addresses (and keys) remembered at most; the longest quiet goes first. */
  maxEntries?: number
}

/** ~100 bytes each: at most ~10 MB, however many addresses an attacker cycles through. */
const defaultMaxEntries = 100_000

/**
 * Failed authentications, counted in token buckets per client address (an IPv6 /64, see
 * toAddressGroup) and per key: `burst` failures, then one more per `60 / perMinute` seconds.
 *
 * - An address whose bucket is empty is refused for every key, before anything is hashed.
 * - A key whose bucket is empty (failures from many addresses) is under attack: clients with any
 *   failure still in their bucket are refused, before hashing. Clients with a clean record are still
 *   checked, because a check costs microseconds and refusing them would let anyone who knows a key
 *   (keys travel in URLs) lock its owner out.
 */
export function createAuthFailureLimiter(options: AuthFailureLimiterOptions): AuthFailureLimiter {
  const { burst, perMinute, now = Date.now, maxEntries = defaultMaxEntries } = options
  const intervalMs = 60_000 / perMinute
  const addresses = createBuckets(burst, intervalMs, maxEntries)
  const keys = createBuckets(burst, intervalMs, maxEntries)

  return {
    retryAfterMs(keyId, clientAddress) {
      const nowMs = now()
      const address = toAddressGroup(clientAddress)
      const addressWaitMs = addresses.msUntilToken(address, nowMs)
      if (addressWaitMs > 0) return addressWaitMs
      const keyWaitMs = keys.msUntilToken(String(keyId), nowMs)
      if (keyWaitMs === 0) return 0
      const cleanInMs = addresses.msUntilFull(address, nowMs)
      return cleanInMs === 0 ? 0 : Math.min(keyWaitMs, cleanInMs)
    },
    recordFailure(keyId, clientAddress) {
      const nowMs = now()
      addresses.take(toAddressGroup(clientAddress), nowMs)
      keys.take(String(keyId), nowMs)
    },
  }
}

/**
 * Token buckets kept as one number each: the moment the bucket is full again (GCRA). No entry: full.
 * A bucket holds `burst - (fullAtMs - now) / intervalMs` tokens.
 */
function createBuckets(burst: number, intervalMs: number, maxEntries: number) {
  const fullAtMs = new Map<string, number>()

  /** How long until the bucket is full; a full one is forgotten. */
  function debtMs(id: string, nowMs: number): number {
    const full = fullAtMs.get(id)
    if (full === undefined) return 0
    if (full <= nowMs) {
      fullAtMs.delete(id)
      return 0
    }
    return full - nowMs
  }

  return {
    msUntilToken(id: string, nowMs: number): number {
      const waitMs = debtMs(id, nowMs) - (burst - 1) * intervalMs
      // sums of fractional intervals at today's epoch round by ~1e-4 ms: that is no wait
      return waitMs > 0.01 ? waitMs : 0
    },
    msUntilFull: debtMs,
    take(id: string, nowMs: number): void {
      const full = Math.min(nowMs + debtMs(id, nowMs) + intervalMs, nowMs + burst * intervalMs)
      // re-inserted, so the Map's order is the order of last failure: evict from the front
      fullAtMs.delete(id)
      fullAtMs.set(id, full)
      for (const oldest of fullAtMs.keys()) {
        if (fullAtMs.size <= maxEntries) break
        fullAtMs.delete(oldest)
      }
    },
  }
}
