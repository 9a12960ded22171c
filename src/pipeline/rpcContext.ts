import type { Logger } from 'pino'
import type { ApiKey } from '../auth/apiKey.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import type { Network } from '../networks/createNetwork.ts'

/** What one request carries through the pipeline. */
export type RpcContext = {
  network: Network
  apiKey: ApiKey
  /** Set when the client goes away: upstream work stops, and it is not an upstream failure. */
  cancellation: Cancellation
  log: Logger
}
