import { type Logger, pino } from 'pino'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { Config } from '../config/configSchema.ts'
import type { Devnet } from '../devnet/startDevnet.ts'
import { systemTimers } from '../failsafe/Timers.ts'
import type { FeeIndexer } from '../gas/createFeeIndexer.ts'
import type { FeeHistoryStore } from '../gas/feeHistoryStore.ts'
import { type Clock, systemClock } from '../metering/clock.ts'
import type { Meter } from '../metering/meterTypes.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { RequestLog } from '../requestLog/createRequestLog.ts'
import { assertPortFree } from '../server/assertPortFree.ts'
import { composeStages } from './composeStages.ts'
import { createReloader, type Reloader } from './createReloader.ts'
import { createRequestHandling } from './createRequestHandling.ts'
import { startAlertsStage } from './startAlertsStage.ts'
import { startDevnetStage } from './startDevnetStage.ts'
import { startMeteringStage } from './startMeteringStage.ts'
import { startNetworksStage } from './startNetworksStage.ts'
import { startRequestLogStage } from './startRequestLogStage.ts'
import { startServerStage } from './startServerStage.ts'
import { startStoresStage } from './startStoresStage.ts'
import { startTracingStage } from './startTracingStage.ts'
import type { WorkerRole } from './workerRole.ts'

export type App = {
  url: string
  host: string
  port: number
  networks: NetworkRegistry
  keys: KeyRegistry
  keyStore: KeyStore
  keyAdmin: KeyAdmin
  meter: Meter
  usageStore: UsageStore
  /** The request log's writer; undefined when `requestLog.enabled` is false. */
  requestLog: RequestLog | undefined
  /** The gas API's fee-history indexers, by chain id. */
  indexers: ReadonlyMap<number, FeeIndexer>
  feeStore: FeeHistoryStore
  /** Set in embedded mode. */
  devnet: Devnet | undefined
  log: Logger
  /** Applies a new config (SIGHUP): docs/operations.md "Reloading configuration". */
  reloader: Reloader
  /**
   * Stops every stage in reverse: drains in-flight requests (HTTP and WebSocket), then the networks
   * a reload left draining, the networks' hubs and indexers, the networks and what they share, the
   * devnet, the meter (its last flush), the bank, the dashboard's figures, the keys and the
   * database, and last the traces.
   */
  close(): Promise<void>
}

export type CreateAppOptions = {
  log?: Logger
  /** Time for the daily reset and rate limits; tests move it. */
  clock?: Clock
  /** Set in a worker of `tollgate start --workers N`: what the primary process holds for all. */
  worker?: WorkerRole
}

/**
 * Wiring only: the one place that imports every area. The gateway is started in stages, each
 * handed what the earlier ones built and closed with what it started (composeStages): tracing →
 * stores and keys → metering → the embedded devnet → networks and their services → request handling
 * (settings, handlers; nothing to stop) → reload → the server. A stage that fails closes the ones
 * started before it; stopping closes them all, latest first.
 */
export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App> {
  const log = options.log ?? pino({ level: config.log.level })
  const { worker } = options
  const clock = options.clock ?? systemClock
  // a second start must fail before it seeds a devnet or writes to a database in use
  // workers share the port and the database file the primary checked and locked
  if (!worker) await assertPortFree(config.server.port, config.server.host)
  return composeStages(log, async (stages) => {
    // its spans are sent last, after the drain
    const { tracing } = await stages.start(() => startTracingStage(config, log))
    const { stores, keyAdmin, keys } = await stages.start(() =>
      startStoresStage(config, { exclusive: !worker, log }),
    )
    // before the meter, stopped after it: its last flush is looked at for alerts
    const alerts = await stages.start(() => startAlertsStage(config, { stores, keys, clock, log }))
    const { meter, usageTotals, dashboardStats, redisUp } = await stages.start(() =>
      startMeteringStage(config, { stores, clock, log, worker, alerts: alerts.watcher }),
    )
    const { requestLog } = await stages.start(() => startRequestLogStage(config, { stores, log }))
    const { devnet, embedded } = await stages.start(() =>
      startDevnetStage(config, { keyStore: stores.keys, keyAdmin, keys, worker }),
    )
    const { starter, live, networks, services } = await stages.start(() =>
      startNetworksStage(config, {
        stores,
        embedded,
        indexesFees: !worker || worker.indexesFees,
        log,
      }),
    )
    const handling = await createRequestHandling(config, {
      stores,
      keys,
      keyAdmin,
      meter,
      networks,
      services,
      dashboardStats,
      tracing,
      requestLog,
      clock,
      log,
    })
    const reloader = await stages.start(() =>
      createReloader(config, {
        log,
        starter,
        registry: networks,
        live,
        embedded,
        services,
        keys,
        keyAdmin,
        settings: handling.settings,
        now: () => clock.now(),
        timers: systemTimers,
      }),
    )
    const { url, host, port } = await stages.start(() =>
      startServerStage(config, {
        handling,
        networks,
        services,
        meter,
        keys,
        usageTotals,
        dashboardStats,
        redisUp,
        pingDatabase: () => stores.ping(),
        reloader,
      }),
    )
    return {
      url,
      host,
      port,
      networks,
      keys,
      keyStore: stores.keys,
      keyAdmin,
      meter,
      usageStore: stores.usage,
      requestLog,
      indexers: services.indexers,
      feeStore: stores.feeHistory,
      devnet,
      log,
      reloader,
    }
  })
}
