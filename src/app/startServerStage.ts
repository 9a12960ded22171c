import type { DashboardStats } from '../admin/createDashboardStats.ts'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { Config } from '../config/configSchema.ts'
import { handleGasRequest } from '../gas/handleGasRequest.ts'
import type { UsageTotals } from '../metering/createUsageTotals.ts'
import type { Meter } from '../metering/meterTypes.ts'
import { createMetrics } from '../metrics/createMetrics.ts'
import { handleMetrics } from '../metrics/handleMetrics.ts'
import { RequestDurations } from '../metrics/RequestDurations.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { handleRpc } from '../pipeline/handleRpc.ts'
import { handleSocketUpgrade } from '../pipeline/handleSocketUpgrade.ts'
import { createHttpServer } from '../server/createHttpServer.ts'
import { createWebSockets } from '../server/createWebSockets.ts'
import { createAnswerTaps } from './createAnswerTaps.ts'
import { createDatabaseProbe } from './createDatabaseProbe.ts'
import type { NetworkServices } from './createNetworkServices.ts'
import { createReadiness } from './createReadiness.ts'
import type { Reloader } from './createReloader.ts'
import type { RequestHandling } from './createRequestHandling.ts'
import { getPackageVersion } from './getPackageVersion.ts'
import { toGatewayReaders } from './toGatewayReaders.ts'

/** The gateway listening. */
export type ServerStage = {
  url: string
  host: string
  port: number
  /**
   * The drain: no new request or connection; HTTP requests and WebSocket calls under way are
   * answered (within server.shutdownGraceMs), side by side; then every connection is closed.
   */
  close(): Promise<void>
}

export type ServerStageDeps = {
  handling: RequestHandling
  networks: NetworkRegistry
  services: Pick<NetworkServices, 'hubs' | 'indexers'>
  meter: Meter
  keys: KeyRegistry
  usageTotals: UsageTotals
  dashboardStats: DashboardStats
  /** Whether the credit bank's Redis connection is up; undefined without Redis. */
  redisUp: (() => boolean) | undefined
  /** Whether the database answers now (Stores.ping). */
  pingDatabase(): Promise<boolean>
  /** Its counts of reloads go to /metrics. */
  reloader: Pick<Reloader, 'stats'>
}

/**
 * The last stage: the WebSocket adapter, /metrics (which reads its connections), then the HTTP
 * server that hands it its upgrades, listening on server.host and server.port.
 */
export async function startServerStage(config: Config, deps: ServerStageDeps): Promise<ServerStage> {
  const { handling, networks, meter, services } = deps
  const { settings } = handling
  /** Set when the drain begins: /readyz answers `draining` to a probe on a kept-alive connection. */
  let draining = false
  // /readyz and /metrics share one database ping in flight
  const databaseUp = createDatabaseProbe(deps.pingDatabase)
  const requestDurations = config.metrics.enabled ? new RequestDurations() : undefined
  const dashboardOn = config.admin.token !== undefined
  const taps = createAnswerTaps(networks, dashboardOn ? deps.dashboardStats : undefined, requestDurations)
  const webSockets = createWebSockets((request) => handleSocketUpgrade(settings.current().upgrade, request), {
    maxFrameBytes: config.websocket.maxFrameBytes,
    pingMs: config.websocket.pingMs,
    trustedProxies: config.server.trustedProxies,
    unsharedAddresses: config.server.maxConnectionsPerAddressExempt,
    onRpcMessage: taps.onRpcMessage,
  })
  const metrics =
    requestDurations &&
    createMetrics({
      version: getPackageVersion(),
      networks: () => networks.all,
      reloads: () => deps.reloader.stats,
      inFlight: {
        answerBytes: () => handling.answers.inUseBytes(),
        bodyBytes: () => handling.bodies.inUseBytes,
      },
      gateway: toGatewayReaders({
        meter,
        keys: deps.keys,
        usage: deps.usageTotals,
        hubs: services.hubs,
        webSockets,
        indexers: services.indexers,
        redisUp: deps.redisUp,
        database: 'postgres' in config.storage ? 'postgres' : 'sqlite',
        databaseUp,
      }),
      requestDurations,
    })
  const server = createHttpServer(
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
        metrics && ((request) => handleMetrics({ metrics, token: settings.current().metricsToken }, request)),
      gas: (request) => handleGasRequest(settings.current().gas, request),
      admin: handling.admin,
      account: handling.account,
      portal: handling.portal,
      dashboard: handling.dashboard,
      upgrade: webSockets.handleUpgrade,
    },
    {
      maxBodyBytes: config.server.maxBodyBytes,
      bodies: handling.bodies,
      bodyStallTimeoutMs: config.server.bodyStallTimeoutMs,
      answers: handling.answers,
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
  const close = async () => {
    draining = true
    const graceMs = config.server.shutdownGraceMs
    await Promise.all([server.close(graceMs), webSockets.close(graceMs)])
  }
  let address: { host: string; port: number }
  try {
    address = await server.listen(config.server.port, config.server.host)
  } catch (err) {
    // the WebSocket adapter's ping timer stops too
    await close()
    throw err
  }
  const { host, port } = address
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, host, port, close }
}
