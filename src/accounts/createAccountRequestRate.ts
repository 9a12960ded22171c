import { TokenBucket } from '../metering/TokenBucket.ts'

/** Account API requests an account may make per second on one gateway (the portal's pages take a few each). */
const accountRequestsPerSecond = 20

/**
 * The account API's rate per account on this gateway: a token bucket each, made at the account's
 * first request (accounts are the operator's to make, so there are as many buckets as accounts that
 * call). Each request reads the database and writes the usage waiting, so a token in a loop would
 * otherwise cost every other key holder.
 */
export function createAccountRequestRate(now: () => number, perSecond = accountRequestsPerSecond) {
  const buckets = new Map<number, TokenBucket>()
  return {
    /** 0 when the account's request may go now (and is counted); else the ms until it may. */
    take(accountId: number): number {
      const nowMs = now()
      let bucket = buckets.get(accountId)
      if (!bucket) {
        bucket = new TokenBucket(perSecond, nowMs)
        buckets.set(accountId, bucket)
      }
      if (!bucket.canTake(1, nowMs)) return bucket.msUntilCanTake(1, nowMs)
      bucket.take(1, nowMs)
      return 0
    },
  }
}

export type AccountRequestRate = ReturnType<typeof createAccountRequestRate>
