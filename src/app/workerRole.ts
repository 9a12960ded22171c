import type { DevnetEndpoint } from '../devnet/startDevnet.ts'
import type { CreditBank } from '../metering/creditBank.ts'

/**
 * What a worker of `tollgate start --workers N` takes from the primary process, which holds the
 * database lock, runs the embedded devnet and (without Redis) the credit bank for all of them.
 */
export type WorkerRole = {
  /** Set when the config runs the embedded devnet: the primary's anvil, which every worker forwards to. */
  devnet: DevnetEndpoint | undefined
  /** The primary's credit bank (undefined with Redis: the workers use the Redis bank). */
  bank: CreditBank | undefined
  /** This worker indexes fee history (one worker does; the others read what it stores). */
  indexesFees: boolean
}
