import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import { createRequestLog, type RequestLog } from '../requestLog/createRequestLog.ts'
import type { Stores } from './stores.ts'

/** The request log's writer, when `requestLog.enabled`. */
export type RequestLogStage = {
  requestLog: RequestLog | undefined
  /** The last rows written: after the drain (the server stage closes first), before the database closes. */
  close(): Promise<void>
}

/**
 * The request log (docs/accounts.md "Request log"): rows written in batches by this process, old
 * rows pruned by the one process on the database that holds the `request-log-prune` lease.
 */
export function startRequestLogStage(config: Config, deps: { stores: Stores; log: Logger }): RequestLogStage {
  const settings = config.requestLog
  if (!settings.enabled) return { requestLog: undefined, close: async () => {} }
  const { stores, log } = deps
  const requestLog = createRequestLog({
    ...settings,
    store: stores.requestLog,
    pruning: stores.lead('request-log-prune'),
    onError: (err) =>
      log.warn(
        { err },
        'the request log failed (a write or prune is tried again with the next; a row is lost)',
      ),
    onDropped: (rows) =>
      log.warn({ rows }, 'request log rows dropped: more came than requestLog.maxBufferedRows holds'),
  })
  return {
    requestLog,
    close: () =>
      requestLog
        .close()
        .catch((err: unknown) => log.warn({ err }, 'the last request log rows were not written')),
  }
}
