import type { Logger } from 'pino'
import type { ApiKey } from '../auth/apiKey.ts'
import type { Network } from '../networks/createNetwork.ts'

/** What one request carries through the pipeline. */
export type RpcContext = {
  network: Network
  apiKey: ApiKey
  /** Aborts when the client goes away: upstream work stops, and it is not an upstream failure. */
  signal: AbortSignal
  log: Logger
}
