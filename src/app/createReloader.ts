import type { Logger } from 'pino'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { getDefaultNetwork } from '../config/getDefaultNetwork.ts'
import { getLiveKeyEffect, type LiveKeyEffect } from '../config/liveConfigKeys.ts'
import { planReload } from '../config/planReload.ts'
import type { Timers } from '../failsafe/Timers.ts'
import { paramLimits } from '../methods/paramLimits.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { NetworkServices } from './createNetworkServices.ts'
import type { LiveNetwork, NetworkStarter } from './createNetworkStarter.ts'
import type { LiveRequestSettings } from './createRequestSettings.ts'

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
   * Rejects with planReload's ConfigError, changing nothing, when the file would move the
   * un-prefixed URLs without naming their network.
   */
  reload(next: Config): Promise<ReloadResult>
  /** A new file was refused whole (invalid): counted; the config running now stays. */
  refused(): void
  stats: ReloadStats
  /** Waits for a reload under way, then stops the networks still draining after one, at once. */
  close(): Promise<void>
}

export type ReloaderTargets = {
  log: Logger
  starter: NetworkStarter
  registry: NetworkRegistry
  /** The networks running now, in registry order. */
  live: LiveNetwork[]
  /** The embedded devnet's network, beside the config's: it stays (rebuilt only on network-wide changes). */
  embedded: NetworkConfig | undefined
  services: NetworkServices
  keys: KeyRegistry
  keyAdmin: KeyAdmin
  /** The request path's settings: built again from the new config and swapped in whole. */
  settings: LiveRequestSettings
  now(): number
  timers: Timers
}

/** Beyond its calls' longest time (timeoutMs, a receipt's wait, the bank's), a replaced network's time to end them. */
const drainGraceMs = 1_000

/** How often (at most) Node looks for requests past server.requestTimeoutMs (createHttpServer.ts). */
const requestTimeoutCheckMs = 1_000

/** What the cap allows for a body still being sent when server.requestTimeoutMs is 0 (no limit). */
const unlimitedBodyMs = 60_000

/**
 * How long a request that looked a network up just before a reload may still be sending its body
 * (it is counted on the network from then: handleRpc): server.requestTimeoutMs, as Node checks it.
 */
function bodyWaitMs(config: Config): number {
  return (config.server.requestTimeoutMs || unlimitedBodyMs) + requestTimeoutCheckMs
}

/**
 * SIGHUP's work inside one process (docs/operations.md "Reloading configuration"). Networks are
 * compared one by one: one whose config and network-wide settings did not change keeps its pool
 * (health, heads, breakers, caches); one added or changed is built new and warmed (heads polled,
 * chain identified) before new calls go to it, and its hub and indexer are put in place at once.
 * One removed or replaced takes no new call; its WebSocket connections answer the calls they have
 * under way, then are closed with 1001 so that clients reconnect to the new one; it stops once the
 * calls on it are done, or at the cap, whichever comes first: the longest a request may take
 * (sending its body, server.requestTimeoutMs; the bank's wait; its upstream calls, `timeoutMs`, and
 * the longest an eth_sendRawTransactionSync's node may wait for the receipt beyond it) and a grace.
 * What to do with each changed key is liveConfigKeys' table; the request path's settings are built
 * again and swapped in whole (createRequestSettings), never changed in place.
 */
export function createReloader(initial: Config, targets: ReloaderTargets): Reloader {
  const { log, timers } = targets
  let current = initial
  let queue: Promise<unknown> = Promise.resolve()
  /** Replaced networks still draining, each with what stops it now. */
  const draining = new Map<LiveNetwork, () => void>()
  const stopping = new Set<Promise<void>>()
  const stats: ReloadStats = { applied: 0, invalid: 0, loadedAtMs: targets.now() }
  let closed = false

  function retire(live: LiveNetwork): void {
    targets.services.retire(live.network)
    const stopped = live
      .stop()
      .catch((err) => log.warn({ err, network: live.network.name }, 'stopping a network failed'))
      .finally(() => stopping.delete(stopped))
    stopping.add(stopped)
  }

  /** `live` takes no new call from now on; it stops once the calls on it are done (or at the cap). */
  function drain(live: LiveNetwork): void {
    const { network } = live
    targets.services.leave(network)
    let done = false
    const finish = () => {
      if (done) return
      done = true
      timers.clearTimeout(cap)
      timers.clearTimeout(turn)
      draining.delete(live)
      log.info({ network: network.name, callsLeft: network.calls.size }, 'a replaced network stopped')
      retire(live)
    }
    const callMs = network.timeoutMs + paramLimits.receiptTimeoutMs
    const capMs = bodyWaitMs(current) + current.metering.redisTimeoutMs + callMs + drainGraceMs
    const cap = timers.setTimeout(finish, capMs)
    // a request that looked the network up just before the swap has counted itself by the next turn
    const turn = timers.setTimeout(() => void network.calls.idle().then(finish), 0)
    draining.set(live, finish)
  }

  async function apply(next: Config): Promise<ReloadResult> {
    if (closed) throw new Error('the gateway is stopping')
    const plan = planReload(current, next)
    const config = plan.config
    const touched = (effect: LiveKeyEffect) => plan.changed.some((key) => getLiveKeyEffect(key) === effect)
    // nothing is changed before the new networks are up; from the swap on, nothing fails
    const networks = await swapNetworks(config, touched('every network'))
    const plansChanged = touched('plans')
    // a plan's maxCallsInFlight is read from the settings too
    if (touched('settings') || touched('auth') || plansChanged) targets.settings.swap(config, touched('auth'))
    if (touched('log')) log.level = config.log.level
    if (plansChanged) targets.keyAdmin.setPlans(config.plans)
    current = config
    stats.applied++
    stats.loadedAtMs = targets.now()
    if (plan.refused.length > 0)
      log.warn(
        { keys: plan.refused },
        `config reload: these keys need a restart and keep their running value: ${plan.refused.join(', ')}`,
      )
    if (plan.moved) {
      const { from, to } = plan.moved
      log.warn(
        { from, to },
        `config reload: the un-prefixed URLs (/v3/KEY, /ws/v3/KEY) now serve ${to === undefined ? 'no network' : `network ${to}`} (before: ${from ?? 'none'}), as defaultNetwork says`,
      )
    }
    const result = { changed: plan.changed, refused: plan.refused, networks }
    log.info(result, plan.changed.length > 0 ? 'config reloaded' : 'config reloaded: nothing changed')
    if (plansChanged && !closed) {
      // the plans are in place; the keys are made again on them by the registry, which retries
      await targets.keys
        .setPlans(config.plans)
        .catch((err) =>
          log.warn(
            { err },
            'config reload: the new plans are in place, but reading the keys again failed; retried at the next key refresh',
          ),
        )
    }
    return result
  }

  /** Every network compared (`wide`: all rebuilt), and the registry's default set from `after`. */
  async function swapNetworks(after: Config, wide: boolean) {
    const running = new Map(targets.live.map((live) => [live.network.name, live]))
    const wanted: NetworkConfig[] = [...after.networks, ...(targets.embedded ? [targets.embedded] : [])]
    const toBuild = wanted.filter((network) => {
      const found = running.get(network.name)
      return wide || !found || JSON.stringify(found.config) !== JSON.stringify(network)
    })
    const started = toBuild.length > 0 ? await targets.starter.start(after, toBuild) : []
    if (closed) {
      // the gateway began stopping while they warmed up: they never take a call
      await Promise.all(started.map((live) => live.stop()))
      throw new Error('the gateway is stopping')
    }
    const built = new Map(started.map((live) => [live.network.name, live]))
    // a client is never shown a lower block number than before: the rebuilt network starts from it
    for (const live of built.values()) {
      const before = running.get(live.network.name)?.network
      if (before && before.chainId === live.network.chainId) void live.network.head.show(before.head.shown)
    }
    const next = wanted.map(
      (network) => built.get(network.name) ?? (running.get(network.name) as LiveNetwork),
    )
    const leaving = targets.live.filter((live) => !next.includes(live))
    // the new hubs and indexers in place first: no upgrade or Gas API call finds none meanwhile
    for (const live of built.values())
      targets.services.add(live, after, running.get(live.network.name)?.network)
    targets.registry.replace(
      next.map((live) => live.network),
      getDefaultNetwork(after),
    )
    targets.live.splice(0, targets.live.length, ...next)
    for (const live of leaving) drain(live)
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
      await queue
      for (const finish of [...draining.values()]) finish()
      await Promise.all([...stopping])
    },
  }
}
