import { type Logger, pino } from 'pino'
import { createAdminTokenFailures } from '../admin/createAdminTokenFailures.ts'
import { createDashboard } from '../admin/createDashboard.ts'
import { createDashboardStats, withUsageTap } from '../admin/createDashboardStats.ts'
import { createSharedDashboardFigures } from '../admin/createSharedDashboardFigures.ts'
import { type AdminRequest, handleAdmin } from '../admin/handleAdmin.ts'
import { createFilterIds } from '../auth/createFilterIds.ts'
import { createKeyRegistry, type KeyRegistry } from '../auth/createKeyRegistry.ts'
import { createSecretVerifier } from '../auth/createSecretVerifier.ts'
import { getSecretHashKey } from '../auth/hashSecret.ts'
import { createKeyAdmin, type KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { getDefaultNetwork } from '../config/getDefaultNetwork.ts'
import { isTracingOn } from '../config/tracingEnv.ts'
import { type Devnet, devnetNetwork, startDevnet } from '../devnet/startDevnet.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { systemTimers } from '../failsafe/Timers.ts'
import type { FeeIndexer } from '../gas/createFeeIndexer.ts'
import type { FeeHistoryStore } from '../gas/feeHistoryStore.ts'
import { handleGasRequest } from '../gas/handleGasRequest.ts'
import { type Clock, systemClock } from '../metering/clock.ts'
import { createMeter } from '../metering/createMeter.ts'
import { createRedisBank } from '../metering/createRedisBank.ts'
import { createUsageSpool } from '../metering/createUsageSpool.ts'
import { createUsageTotals } from '../metering/createUsageTotals.ts'
import { getSpoolDir } from '../metering/getSpoolDir.ts'
import type { Meter } from '../metering/meterTypes.ts'
import { replayUsageSpool } from '../metering/replayUsageSpool.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import { createMetrics } from '../metrics/createMetrics.ts'
import { handleMetrics } from '../metrics/handleMetrics.ts'
import { createNetworkRegistry, type NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { handleRpc } from '../pipeline/handleRpc.ts'
import { handleSocketUpgrade } from '../pipeline/handleSocketUpgrade.ts'
import { assertPortFree } from '../server/assertPortFree.ts'
import { attachWebSockets, type WebSockets } from '../server/attachWebSockets.ts'
import { createHttpServer, type HttpServer } from '../server/createHttpServer.ts'
import { createAnswerMemory, smallMessageBytes } from '../upstreams/AnswerBudget.ts'
import { createAnswerTaps } from './createAnswerTaps.ts'
import { createDatabaseProbe } from './createDatabaseProbe.ts'
import { createNetworkServices } from './createNetworkServices.ts'
import { createNetworkStarter } from './createNetworkStarter.ts'
import { createReadiness } from './createReadiness.ts'
import { createReloader, type Reloader } from './createReloader.ts'
import { createRequestSettings } from './createRequestSettings.ts'
import { createStores } from './createStores.ts'
import { getPackageVersion } from './getPackageVersion.ts'
import { toGatewayReaders } from './toGatewayReaders.ts'
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
  /** The gas API's fee-history indexers, by chain id. */
  indexers: ReadonlyMap<number, FeeIndexer>
  feeStore: FeeHistoryStore
  /** Set in embedded mode. */
  devnet: Devnet | undefined
  log: Logger
  /** Applies a new config (SIGHUP): docs/operations.md "Reloading configuration". */
  reloader: Reloader
  /** Drains in-flight requests, then stops the server, the devnet and the database. */
  close(): Promise<void>
}

export type CreateAppOptions = {
  log?: Logger
  /** Time for the daily reset and rate limits; tests move it. */
  clock?: Clock
  /** Set in a worker of `tollgate start --workers N`: what the primary process holds for all. */
  worker?: WorkerRole
}

/** Wiring only: the one place that imports every area. */
export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App> {
  const log = options.log ?? pino({ level: config.log.level })
  const cleanups: (() => Promise<void> | void)[] = []
  let draining = false
  const cleanup = async () => {
    draining = true
    for (const step of cleanups.reverse()) await step()
  }

  try {
    // a second start must fail before it seeds a devnet or writes to a database in use
    // workers share the port and the database file the primary checked and locked
    const { worker } = options
    if (!worker) await assertPortFree(config.server.port, config.server.host)
    // the SDK is loaded only when tracing is on; its spans are sent last, after the drain
    const traces = isTracingOn(config.tracing)
      ? (await import('../tracing/startTracing.ts')).startTracing(config.tracing, log)
      : undefined
    if (traces) cleanups.push(() => traces.close())
    const stores = await createStores(config.storage, {
      exclusive: !worker,
      onSessionError: (err) =>
        log.warn({ err }, 'a database session for key changes or leases failed; reopening'),
      onWarning: (message) => log.warn(message),
    })
    cleanups.push(() => stores.close())
    const keyAdmin = createKeyAdmin(stores.keys, config.plans)
    const keys = await createKeyRegistry(stores.keys, config.plans, {
      watch: stores.watchKeys,
      onError: (err, keyId) => log.error({ err, keyId }, 'key reload failed'),
    })
    cleanups.push(() => keys.close())
    const clock = options.clock ?? systemClock
    const dashboardOn = config.admin.token !== undefined
    // with Redis, the overview's figures are every instance's: counted into and read from Redis
    const dashboardStats = createDashboardStats({
      now: () => clock.now(),
      shared:
        dashboardOn && config.redis
          ? {
              figures: await createSharedDashboardFigures({
                url: config.redis.url,
                keyPrefix: config.redis.keyPrefix,
                onError: (err) => log.warn({ err }, 'redis connection error (dashboard figures)'),
              }),
              flushMs: config.metering.flushMs,
              onError: (err) => log.warn({ err }, 'sending the dashboard figures to Redis failed; retrying'),
            }
          : undefined,
    })
    // after the meter's last flush (cleanups run in reverse): its usage is sent too
    cleanups.push(() => dashboardStats.close())
    // with Redis, the credit balances and rate limits are shared by every instance (leases)
    // (without Redis, a worker's balances are shared with the other workers through the primary's bank)
    const redisBank = config.redis
      ? await createRedisBank({
          url: config.redis.url,
          keyPrefix: config.redis.keyPrefix,
          commandTimeoutMs: config.metering.redisTimeoutMs,
          onError: (err) => log.warn({ err }, 'redis connection error'),
        })
      : undefined
    const bank = redisBank ?? worker?.bank
    if (bank) cleanups.push(() => bank.close())
    const spool = createUsageSpool({
      dir: getSpoolDir(config),
      ledgerId: await stores.usage.getLedgerId(),
      onWrite: ({ file, calls, credits, cause }) =>
        log.warn(
          { err: cause, file, calls, credits },
          'the database did not take the last usage: kept in a spool file, added at the next start',
        ),
    })
    // before the meter reads today's balances; with --workers the primary did it before forking
    if (!worker) await replayUsageSpool(spool, stores.usage, log)
    // the dashboard's live figures and /metrics' totals count the usage the meter writes
    const usageTotals = createUsageTotals()
    const meter = await createMeter({
      store: withUsageTap(stores.usage, (delta) => {
        usageTotals.record(delta)
        if (dashboardOn) dashboardStats.recordUsage(delta)
      }),
      clock,
      flushMs: config.metering.flushMs,
      spool,
      bank,
      onBankDown: config.metering.onRedisDown,
      onError: (err) => log.error({ err }, 'usage flush or credit report failed; retrying with the next'),
    })
    cleanups.push(() => meter.close())

    let devnet: App['devnet']
    /** The embedded devnet's network, beside the config's ones. */
    let embedded: NetworkConfig | undefined
    if (config.devnet && worker?.devnet) {
      // the primary started and seeded it, and made the demo key
      embedded = devnetNetwork(worker.devnet)
    } else if (config.devnet) {
      const started = await startDevnet(config.devnet, { store: stores.keys, admin: keyAdmin })
      cleanups.push(() => started.anvil.stop())
      await keys.refresh()
      devnet = started
      embedded = devnetNetwork(started.anvil)
    }
    const networkConfigs = embedded ? [...config.networks, embedded] : config.networks

    // every network polled and its chain identified before the gateway serves
    const starter = await createNetworkStarter(config, log)
    cleanups.push(() => starter.close())
    const live = await starter.start(config, networkConfigs)
    const networks = createNetworkRegistry(
      live.map((each) => each.network),
      getDefaultNetwork(config),
    )
    cleanups.push(async () => {
      await Promise.all(live.map((each) => each.stop()))
    })
    const services = createNetworkServices({
      stores,
      indexesFees: !worker || worker.indexesFees,
      log,
    })
    for (const each of live) services.add(each, config)
    cleanups.push(() => services.close())
    const { indexers, hubs } = services

    const secretHashKey = await getSecretHashKey(stores.keys)
    const rpcParts = {
      keys,
      networks,
      meter,
      filterIds: createFilterIds(secretHashKey),
      log,
      tracing: traces?.tracing,
      verifySecret: createSecretVerifier({
        hashKey: secretHashKey,
        store: stores.keys,
        onError: (err) => log.error({ err }, 'storing a secret hash in place of its scrypt hash failed'),
      }),
    }
    // wrong admin tokens, per client address: /admin and the dashboard's sign-in count together
    const adminTokenFailures = createAdminTokenFailures(() => clock.now())
    const adminDeps = {
      token: config.admin.token,
      tokenFailures: adminTokenFailures,
      admin: keyAdmin,
      usage: stores.usage,
      get networks() {
        return networks.all.map((network) => network.name)
      },
      flushUsage: () => meter.flush(),
      now: () => clock.now(),
    }
    const admin = (request: AdminRequest) => handleAdmin(adminDeps, request)
    const dashboard =
      config.admin.token === undefined
        ? undefined
        : createDashboard({
            token: config.admin.token,
            admin,
            stats: dashboardStats,
            networks: () => networks.all,
            indexers,
            now: () => clock.now(),
            tokenFailures: adminTokenFailures,
          })
    // one bound on answers in flight for the process, over HTTP and WebSocket alike
    const answers = createAnswerMemory({
      maxRequestBytes: config.server.maxAnswerBytes,
      maxBytes: config.server.maxAnswerBytesInFlight,
    })
    // and one on request bodies and WebSocket messages
    const bodies = new ByteBulkhead(config.server.maxBodyBytesInFlight, smallMessageBytes)
    let webSockets: WebSockets | undefined
    // /readyz and /metrics share one database ping in flight
    const databaseUp = createDatabaseProbe(() => stores.ping())
    const metrics = config.metrics.enabled
      ? createMetrics({
          version: getPackageVersion(),
          networks: () => networks.all,
          reloads: () => reloader.stats,
          inFlight: { answerBytes: () => answers.inUseBytes(), bodyBytes: () => bodies.inUseBytes },
          gateway: toGatewayReaders({
            meter,
            keys,
            usage: usageTotals,
            hubs,
            webSockets: () => webSockets,
            indexers,
            redisUp: redisBank && (() => redisBank.isConnected()),
            database: 'postgres' in config.storage ? 'postgres' : 'sqlite',
            databaseUp,
          }),
        })
      : undefined
    // what the live keys set, read through one reference: a reload swaps in new settings whole
    const settings = createRequestSettings(
      {
        rpc: rpcParts,
        gas: { indexers },
        upgrade: { hubs, answers, bodies, onNetworkRetired: services.onRetired },
        now: () => clock.now(),
      },
      config,
    )
    const taps = createAnswerTaps(
      networks,
      dashboardOn ? dashboardStats : undefined,
      metrics?.requestDurations,
    )
    const server: HttpServer = createHttpServer(
      {
        rpc: (request) => handleRpc(settings.current().rpc, request),
        ready: createReadiness({
          networks,
          databaseUp,
          bankUp: () => meter.bankUp(),
          onBankDown: config.metering.onRedisDown,
          draining: () => draining,
        }),
        metrics:
          metrics &&
          ((request) => handleMetrics({ metrics, token: settings.current().metricsToken }, request)),
        gas: (request) => handleGasRequest(settings.current().gas, request),
        admin,
        dashboard,
      },
      {
        maxBodyBytes: config.server.maxBodyBytes,
        bodies,
        answers,
        sendTimeoutMs: config.server.sendTimeoutMs,
        keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
        headersTimeoutMs: config.server.headersTimeoutMs,
        requestTimeoutMs: config.server.requestTimeoutMs,
        maxConnections: config.server.maxConnections,
        maxConnectionsPerAddress: config.server.maxConnectionsPerAddress,
        maxConnectionsPerAddressExempt: config.server.maxConnectionsPerAddressExempt,
        trustedProxies: config.server.trustedProxies,
        cors: config.server.cors,
        compression: config.server.compression,
        rpcAnswers: metrics?.rpcAnswers,
        onRpcAnswer: taps.onRpcAnswer,
      },
    )
    const reloader = createReloader(config, {
      log,
      starter,
      registry: networks,
      live,
      embedded,
      services,
      keys,
      keyAdmin,
      settings,
      now: () => clock.now(),
      timers: systemTimers,
    })
    cleanups.push(() => reloader.close())
    webSockets = attachWebSockets(
      server.server,
      (request) => handleSocketUpgrade(settings.current().upgrade, request),
      {
        maxFrameBytes: config.websocket.maxFrameBytes,
        pingMs: config.websocket.pingMs,
        trustedProxies: config.server.trustedProxies,
        onRpcMessage: taps.onRpcMessage,
      },
    )
    const { host, port } = await server.listen(config.server.port, config.server.host)
    const attached = webSockets
    // HTTP requests and WebSocket calls under way are answered (within the grace), side by side
    cleanups.push(async () => {
      const graceMs = config.server.shutdownGraceMs
      await Promise.all([server.close(graceMs), attached.close(graceMs)])
    })

    return {
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      host,
      port,
      networks,
      keys,
      keyStore: stores.keys,
      keyAdmin,
      meter,
      usageStore: stores.usage,
      indexers,
      feeStore: stores.feeHistory,
      devnet,
      log,
      reloader,
      close: cleanup,
    }
  } catch (err) {
    await cleanup()
    throw err
  }
}
