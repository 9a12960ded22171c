import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { createJwtVerifier } from '../auth/createJwtVerifier.ts'
import type { Config } from '../config/configSchema.ts'
import type { GasDeps } from '../gas/handleGasRequest.ts'
import type { RpcDeps } from '../pipeline/handleRpc.ts'
import type { SocketUpgradeDeps } from '../pipeline/handleSocketUpgrade.ts'

/** What the request path reads, the config's live keys included: one set, replaced whole by a reload. */
export type RequestSettings = {
  readonly rpc: RpcDeps
  readonly gas: RpcDeps & GasDeps
  readonly upgrade: SocketUpgradeDeps
  /** The bearer token a scrape of /metrics must send, if any. */
  readonly metricsToken: string | undefined
}

/** The authentication limiter and JWT verifier, made from the config's `auth`. */
type AuthDeps = Pick<RpcDeps, 'authFailures' | 'verifyJwt'>

/** What the settings are built around: the parts no config key changes, and the clock. */
export type RequestSettingsParts = {
  rpc: Omit<RpcDeps, 'maxBatchSize' | 'maxJsonDepth' | 'maxCallsInFlight' | keyof AuthDeps>
  gas: Pick<GasDeps, 'indexers'>
  upgrade: Omit<
    SocketUpgradeDeps,
    keyof RpcDeps | 'maxSubscriptions' | 'maxBufferedBytes' | 'maxInFlight' | 'now'
  >
  /** The clock failed authentications and JWT expiries are read on. */
  now(): number
}

export type LiveRequestSettings = {
  /**
   * The settings in place: an HTTP request or a Gas API call reads them once, as it starts, and a
   * WebSocket connection keeps the ones it was opened with.
   */
  current(): RequestSettings
  /**
   * Builds new settings from `config` and puts them in place of the current ones, which nothing
   * changes: the authentication limiter and JWT verifier are made again only when `authChanged`
   * (the count of failed attempts starts again).
   */
  swap(config: Config, authChanged: boolean): void
}

/** The request path's settings from `config`, swapped whole by each reload (createReloader). */
export function createRequestSettings(parts: RequestSettingsParts, config: Config): LiveRequestSettings {
  let auth = toAuthDeps(config, parts.now)
  let current = toRequestSettings(parts, config, auth)
  return {
    current: () => current,
    swap(next, authChanged) {
      if (authChanged) auth = toAuthDeps(next, parts.now)
      current = toRequestSettings(parts, next, auth)
    },
  }
}

function toAuthDeps(config: Config, now: () => number): AuthDeps {
  return {
    authFailures: createAuthFailureLimiter({
      burst: config.auth.failureBurst,
      perMinute: config.auth.failuresPerMinute,
      now,
    }),
    verifyJwt: createJwtVerifier({ maxLifetimeSeconds: config.auth.maxJwtLifetimeSeconds, now }),
  }
}

function toRequestSettings(parts: RequestSettingsParts, config: Config, auth: AuthDeps): RequestSettings {
  const rpc: RpcDeps = {
    ...parts.rpc,
    ...auth,
    maxBatchSize: config.server.maxBatchSize,
    maxJsonDepth: config.server.maxJsonDepth,
    maxCallsInFlight: (plan) => config.plans[plan].maxCallsInFlight,
  }
  return {
    rpc,
    gas: { ...rpc, ...parts.gas, historyBlocks: config.gas.historyBlocks },
    upgrade: {
      ...rpc,
      ...parts.upgrade,
      now: parts.now,
      maxSubscriptions: config.websocket.maxSubscriptions,
      maxBufferedBytes: config.websocket.maxBufferedBytes,
      maxInFlight: config.websocket.maxInFlightRequests,
    },
    metricsToken: config.metrics.token,
  }
}
