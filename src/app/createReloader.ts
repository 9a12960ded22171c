import type { Logger } from 'pino'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { planReload } from '../config/planReload.ts'
import type { GasDeps } from '../gas/handleGasRequest.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { HttpRpcDeps } from '../pipeline/handleHttpRpc.ts'
import type { SocketUpgradeDeps } from '../pipeline/handleSocketUpgrade.ts'
import type { NetworkServices } from './createNetworkServices.ts'
import type { LiveNetwork, NetworkStarter } from './startNetworks.ts'

/** What one reload did: keys taken and refused, and each network's fate. */
export type ReloadResult = {
  changed: string[]
  refused: string[]
  networks: { added: string[]; removed: string[]; rebuilt: string[] }
}

/** Reloads counted by result, and when the config running now was loaded (for /metrics). */
export type ReloadStats = { applied: number; invalid: number; loadedAtMs: number }

export type Reloader = {
  /** The config running now. */
  config(): Config
  /**
   * Applies a new, valid config: the live keys take effect for new calls, restart-only keys keep
   * their running value (named in one log line). One reload at a time: a second waits for the first.
   */
  reload(next: Config): Promise<ReloadResult>
  /** A new file was refused whole (invalid): counted; the config running now stays. */
  refused(): void
  stats: ReloadStats
  /** Stops the networks still draining after a reload, at once. */
  close(): Promise<void>
}

export type ReloaderTargets = {
  log: Logger
  starter: NetworkStarter
  registry: NetworkRegistry
  /** The networks running now, in registry order; the last ones may be beyond the config's (the devnet). */
  live: LiveNetwork[]
  services: NetworkServices
  keys: KeyRegistry
  keyAdmin: KeyAdmin
  /** The request path's settings, changed in place: a call reads them as it starts. */
  rpc: HttpRpcDeps
  gas: HttpRpcDeps & GasDeps
  upgrade: SocketUpgradeDeps
  metrics: { token: string | undefined } | undefined
  /** The authentication limiter and JWT verifier for a config (made again when `auth` changes). */
  authDeps(config: Config): Pick<HttpRpcDeps, 'authFailures' | 'verifyJwt'>
  now(): number
}

/** Settings every network is built on: a change to one rebuilds them all. */
const networkWideKeys = ['upstreams', 'failover', 'cache.enabled', 'cache.maxBytes', 'cache.maxEntryBytes']

/**
 * SIGHUP's work inside one process (docs/operations.md "Reloading configuration"). Networks are
 * compared one by one: one whose config and network-wide settings did not change keeps its pool
 * (health, heads, breakers, caches); one added or changed is built new and warmed (heads polled,
 * chain identified) before new calls go to it; one removed or replaced keeps serving the calls
 * already on it and stops `upstreams.timeoutMs` (the longest a call may take) later, when its
 * WebSocket connections are closed with 1001 so that clients reconnect to the new one.
 */
export function createReloader(initial: Config, targets: ReloaderTargets): Reloader {
  const { log } = targets
  let current = initial
  let queue: Promise<unknown> = Promise.resolve()
  const draining = new Map<LiveNetwork, NodeJS.Timeout>()
  const stats: ReloadStats = { applied: 0, invalid: 0, loadedAtMs: targets.now() }
  let closed = false

  const retire = async (live: LiveNetwork) => {
    draining.delete(live)
    targets.services.retire(live.network)
    await live
      .stop()
      .catch((err) => log.warn({ err, network: live.network.name }, 'stopping a network failed'))
  }

  async function apply(next: Config): Promise<ReloadResult> {
    if (closed) throw new Error('the gateway is stopping')
    const plan = planReload(current, next)
    const config = plan.config
    const networks = await swapNetworks(current, config, plan.changed)
    if (plan.changed.includes('plans') || plan.changed.some((key) => key.startsWith('plans.'))) {
      targets.keyAdmin.setPlans(config.plans)
      await targets.keys.setPlans(config.plans)
    }
    const auth = plan.changed.some((key) => key.startsWith('auth.')) ? targets.authDeps(config) : {}
    for (const deps of [targets.rpc, targets.gas, targets.upgrade]) {
      Object.assign(deps, auth)
      deps.maxBatchSize = config.server.maxBatchSize
      deps.maxJsonDepth = config.server.maxJsonDepth
    }
    targets.upgrade.maxSubscriptions = config.websocket.maxSubscriptions
    targets.upgrade.maxInFlight = config.websocket.maxInFlightRequests
    targets.upgrade.maxBufferedBytes = config.websocket.maxBufferedBytes
    targets.gas.historyBlocks = config.gas.historyBlocks
    if (targets.metrics) targets.metrics.token = config.metrics.token
    log.level = config.log.level
    current = config
    stats.applied++
    stats.loadedAtMs = targets.now()
    if (plan.refused.length > 0)
      log.warn(
        { keys: plan.refused },
        `config reload: these keys need a restart and keep their running value: ${plan.refused.join(', ')}`,
      )
    const result = { changed: plan.changed, refused: plan.refused, networks }
    log.info(result, plan.changed.length > 0 ? 'config reloaded' : 'config reloaded: nothing changed')
    return result
  }

  async function swapNetworks(before: Config, after: Config, changed: string[]) {
    const wide = changed.some((key) =>
      networkWideKeys.some((each) => key === each || key.startsWith(`${each}.`)),
    )
    const running = new Map(targets.live.map((live) => [live.network.name, live]))
    // the networks past the config's (the embedded devnet) stay, rebuilt only on network-wide changes
    const extra = targets.live.slice(before.networks.length).map((live) => live.config)
    const wanted: NetworkConfig[] = [...after.networks, ...extra]
    const toBuild = wanted.filter((network) => {
      const found = running.get(network.name)
      return wide || !found || JSON.stringify(found.config) !== JSON.stringify(network)
    })
    const started = await targets.starter.start(after, toBuild)
    if (closed) {
      // the gateway began stopping while they warmed up: they never take a call
      await Promise.all(started.map((live) => live.stop()))
      throw new Error('the gateway is stopping')
    }
    const built = new Map(started.map((live) => [live.network.name, live]))
    // a client is never shown a lower block number than before: the rebuilt network starts from it
    for (const live of built.values()) {
      const before = running.get(live.network.name)?.network
      if (before && before.chainId === live.network.chainId) void live.network.showHead(before.shownHead)
    }
    const next = wanted.map(
      (network) => built.get(network.name) ?? (running.get(network.name) as LiveNetwork),
    )
    const leaving = targets.live.filter((live) => !next.includes(live))
    // an indexer hands its chain over before the new network's starts; hubs follow
    for (const live of leaving) await targets.services.detach(live.network)
    for (const live of built.values()) targets.services.add(live, after)
    targets.registry.replace(next.map((live) => live.network))
    targets.live.splice(0, targets.live.length, ...next)
    for (const live of leaving) {
      const timer = setTimeout(() => void retire(live), live.network.timeoutMs)
      timer.unref()
      draining.set(live, timer)
    }
    const names = (list: readonly { network: Network }[]) => list.map((live) => live.network.name)
    return {
      added: names([...built.values()].filter((live) => !running.has(live.network.name))),
      removed: names(leaving.filter((live) => !built.has(live.network.name))),
      rebuilt: names([...built.values()].filter((live) => running.has(live.network.name))),
    }
  }

  return {
    config: () => current,
    reload(next) {
      const run = queue.then(() => apply(next))
      queue = run.catch(() => undefined)
      return run
    },
    refused() {
      stats.invalid++
    },
    stats,
    async close() {
      closed = true
      for (const timer of draining.values()) clearTimeout(timer)
      await Promise.all([...draining.keys()].map(retire))
    },
  }
}
