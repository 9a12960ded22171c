import { type Logger, pino } from 'pino'
import { createAdminTokenFailures } from '../admin/createAdminTokenFailures.ts'
import { createDashboard } from '../admin/createDashboard.ts'
import { createDashboardStats, withUsageTap } from '../admin/createDashboardStats.ts'
import { createNetworkNamer } from '../admin/createNetworkNamer.ts'
import { createSharedDashboardFigures } from '../admin/createSharedDashboardFigures.ts'
import { type AdminRequest, handleAdmin } from '../admin/handleAdmin.ts'
import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { createFilterIds } from '../auth/createFilterIds.ts'
import { createJwtVerifier } from '../auth/createJwtVerifier.ts'
import { createKeyRegistry, type KeyRegistry } from '../auth/createKeyRegistry.ts'
import { createSecretVerifier } from '../auth/createSecretVerifier.ts'
import { getSecretHashKey } from '../auth/hashSecret.ts'
import { createKeyAdmin, type KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { type Devnet, devnetNetwork, startDevnet } from '../devnet/startDevnet.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { createFeeIndexer, type FeeIndexer } from '../gas/createFeeIndexer.ts'
import { createSharedFeeIndexer } from '../gas/createSharedFeeIndexer.ts'
import type { FeeHistoryStore } from '../gas/feeHistoryStore.ts'
import { handleGasRequest } from '../gas/handleGasRequest.ts'
import { type Clock, systemClock } from '../metering/clock.ts'
import { createMeter } from '../metering/createMeter.ts'
import { createRedisBank } from '../metering/createRedisBank.ts'
import { createUsageSpool } from '../metering/createUsageSpool.ts'
import { getSpoolDir } from '../metering/getSpoolDir.ts'
import type { Meter } from '../metering/meterTypes.ts'
import { replayUsageSpool } from '../metering/replayUsageSpool.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import { createMetrics } from '../metrics/createMetrics.ts'
import { handleMetrics } from '../metrics/handleMetrics.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { type HttpRpcDeps, handleHttpRpc } from '../pipeline/handleHttpRpc.ts'
import { handleSocketUpgrade } from '../pipeline/handleSocketUpgrade.ts'
import { assertPortFree } from '../server/assertPortFree.ts'
import { attachWebSockets } from '../server/attachWebSockets.ts'
import { createHttpServer, type HttpServer } from '../server/createHttpServer.ts'
import type { Leadership } from '../store/leadership.ts'
import { createSubscriptionHub, type SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import { isTracingOn } from '../tracing/isTracingOn.ts'
import { createAnswerMemory, smallMessageBytes } from '../upstreams/AnswerBudget.ts'
import { createReadiness } from './createReadiness.ts'
import { createStores } from './createStores.ts'
import { startNetworks } from './startNetworks.ts'
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

/** A worker that does not index fee history: another worker of the same gateway does. */
const neverLeads: Leadership = { held: () => false, onChange: () => () => {} }

/** Wiring only: the one place that imports every area. */
export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App> {
  const log = options.log ?? pino({ level: config.log.level })
  const cleanups: (() => Promise<void> | void)[] = []
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step()
  }

  try {
    // a second start must fail before it seeds a devnet or writes to a database in use
    // workers share the port and the database file the primary checked and locked
    const { worker } = options
    if (!worker) await assertPortFree(config.server.port, config.server.host)
    // the SDK is loaded only when tracing is on; its spans are sent last, after the drain
    const traces = isTracingOn(config.tracing)
      ? (await import('../tracing/startTracing.ts')).startTracing(config.tracing)
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
    const bank = config.redis
      ? await createRedisBank({
          url: config.redis.url,
          keyPrefix: config.redis.keyPrefix,
          commandTimeoutMs: config.metering.redisTimeoutMs,
          onError: (err) => log.warn({ err }, 'redis connection error'),
        })
      : worker?.bank
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
    const meter = await createMeter({
      // the dashboard's live figures count the usage the meter writes
      store: dashboardOn ? withUsageTap(stores.usage, dashboardStats.recordUsage) : stores.usage,
      clock,
      flushMs: config.metering.flushMs,
      spool,
      bank,
      onBankDown: config.metering.onRedisDown,
      onError: (err) => log.error({ err }, 'usage flush or credit report failed; retrying with the next'),
    })
    cleanups.push(() => meter.close())

    let devnet: App['devnet']
    const networkConfigs: NetworkConfig[] = [...config.networks]
    if (config.devnet && worker?.devnet) {
      // the primary started and seeded it, and made the demo key
      networkConfigs.push(devnetNetwork(worker.devnet))
    } else if (config.devnet) {
      const started = await startDevnet(config.devnet, { store: stores.keys, admin: keyAdmin })
      cleanups.push(() => started.anvil.stop())
      await keys.refresh()
      devnet = started
      networkConfigs.push(devnetNetwork(started.anvil))
    }

    // every network polled and its chain identified before the gateway serves
    const { networks, headPollMs } = await startNetworks(config, networkConfigs, {
      log,
      onClose: (step) => cleanups.push(step),
    })

    const indexers = new Map<number, FeeIndexer>()
    if (config.gas.enabled) {
      for (const network of networks.all) {
        // one instance on the database indexes each chain; the others read what it stores
        const indexer = createSharedFeeIndexer({
          network,
          createIndexer: () =>
            createFeeIndexer({
              network,
              store: stores.feeHistory,
              windowBlocks: config.gas.windowBlocks,
              chunkBlocks: config.gas.chunkBlocks,
              pollMs: headPollMs,
              log,
            }),
          leadership:
            worker && !worker.indexesFees ? neverLeads : stores.lead(`fee-indexer:${network.chainId}`),
          store: stores.feeHistory,
          windowBlocks: config.gas.windowBlocks,
          log,
        })
        indexers.set(network.chainId, indexer)
        indexer.start()
      }
      cleanups.push(async () => {
        await Promise.all([...indexers.values()].map((indexer) => indexer.stop()))
      })
    }

    const secretHashKey = await getSecretHashKey(stores.keys)
    const rpcDeps: HttpRpcDeps = {
      keys,
      networks,
      meter,
      filterIds: createFilterIds(secretHashKey),
      maxBatchSize: config.server.maxBatchSize,
      maxJsonDepth: config.server.maxJsonDepth,
      log,
      tracing: traces?.tracing,
      verifySecret: createSecretVerifier({
        hashKey: secretHashKey,
        store: stores.keys,
        onError: (err) => log.error({ err }, 'storing a secret hash in place of its scrypt hash failed'),
      }),
      authFailures: createAuthFailureLimiter({
        burst: config.auth.failureBurst,
        perMinute: config.auth.failuresPerMinute,
        now: () => clock.now(),
      }),
      verifyJwt: createJwtVerifier({
        maxLifetimeSeconds: config.auth.maxJwtLifetimeSeconds,
        now: () => clock.now(),
      }),
    }
    const gasDeps = { ...rpcDeps, indexers, historyBlocks: config.gas.historyBlocks }
    // wrong admin tokens, per client address: /admin and the dashboard's sign-in count together
    const adminTokenFailures = createAdminTokenFailures(() => clock.now())
    const adminDeps = {
      token: config.admin.token,
      tokenFailures: adminTokenFailures,
      admin: keyAdmin,
      usage: stores.usage,
      networks: networks.all.map((network) => network.name),
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
            networks: networks.all,
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
    const metrics = config.metrics.enabled
      ? createMetrics({
          networks: networks.all,
          inFlight: { answerBytes: () => answers.inUseBytes(), bodyBytes: () => bodies.inUseBytes },
        })
      : undefined
    const metricsDeps = metrics && { metrics, token: config.metrics.token }
    // the dashboard counts answers by network: remembered per path name and Host, not parsed each time
    const nameNetwork = createNetworkNamer(networks)
    const server: HttpServer = createHttpServer(
      {
        rpc: (request) => handleHttpRpc(rpcDeps, request),
        ready: createReadiness({ networks, pingDatabase: () => stores.ping() }),
        metrics: metricsDeps && ((request) => handleMetrics(metricsDeps, request)),
        gas: (request) => handleGasRequest(gasDeps, request),
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
        onRpcAnswer: dashboardOn
          ? (networkName, host, status) => dashboardStats.noteAnswer(nameNetwork(networkName, host), status)
          : undefined,
      },
    )
    const hubs = new Map<string, SubscriptionHub>(
      networks.all.map((network) => {
        const wsUrls = (networkConfigs.find((each) => each.name === network.name)?.upstreams ?? [])
          .map((upstream) => upstream.ws)
          .filter((url): url is string => url !== undefined)
        return [
          network.name,
          createSubscriptionHub({
            network,
            wsUrls,
            requestTimeoutMs: config.upstreams.attemptTimeoutMs,
            log,
          }),
        ]
      }),
    )
    cleanups.push(() => {
      for (const hub of hubs.values()) hub.close()
    })
    const upgradeDeps = {
      ...rpcDeps,
      hubs,
      answers,
      bodies,
      maxSubscriptions: config.websocket.maxSubscriptions,
      maxBufferedBytes: config.websocket.maxBufferedBytes,
      maxInFlight: config.websocket.maxInFlightRequests,
      now: () => clock.now(),
    }
    const webSockets = attachWebSockets(
      server.server,
      (request) => handleSocketUpgrade(upgradeDeps, request),
      {
        maxFrameBytes: config.websocket.maxFrameBytes,
        pingMs: config.websocket.pingMs,
        trustedProxies: config.server.trustedProxies,
      },
    )
    const { host, port } = await server.listen(config.server.port, config.server.host)
    cleanups.push(() => server.close(config.server.shutdownGraceMs))
    cleanups.push(() => webSockets.close())

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
      close: cleanup,
    }
  } catch (err) {
    await cleanup()
    throw err
  }
}
