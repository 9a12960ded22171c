import type { Logger } from 'pino'
import { createSharedCache, type SharedCache } from '../cache/createSharedCache.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'
import { getFailoverMethods } from '../methods/methodTable.ts'
import { createFleetHeads, type FleetHeads } from '../networks/createFleetHeads.ts'
import { createNetwork, type Network } from '../networks/createNetwork.ts'
import { identifyChain } from '../networks/identifyChain.ts'

type SharedParts = ReturnType<SharedCache['forNetwork']>

/** A network that is up, with the config it was built from, and what stops it. */
export type LiveNetwork = {
  network: Network
  config: NetworkConfig
  /** Stops identifying its chain and closes it (its head tracker, probes and upstream connections). */
  stop(): Promise<void>
}

export type NetworkStarter = {
  /**
   * Builds these networks on `config`'s upstream, failover and cache settings, each with its upstream
   * pool, head tracker and caches: every upstream's head polled, its history probed, and the chain
   * identified before it is handed back (at start, and on a reload before any call is sent to it).
   */
  start(config: Config, networkConfigs: readonly NetworkConfig[]): Promise<LiveNetwork[]>
  /** Closes what the networks share (the Redis cache): after every network was stopped. */
  close(): Promise<void>
}

/**
 * The networks of createApp and of its reloads. With Redis, immutable answers and the highest head
 * shown are shared by every instance through one connection, made here once (its settings need a
 * restart).
 */
export async function createNetworkStarter(config: Config, log: Logger): Promise<NetworkStarter> {
  const sharedCache =
    config.redis && config.cache.shared.enabled
      ? await createSharedCache({
          url: config.redis.url,
          keyPrefix: config.redis.keyPrefix,
          ttlSeconds: config.cache.shared.ttlSeconds,
          maxBytes: config.cache.shared.maxBytes,
          waitMs: config.cache.shared.waitMs,
          headGraceMs: config.cache.shared.headGraceMs,
          log,
        })
      : undefined
  // with Redis, one instance of the fleet polls each network's head (the lease holder)
  const fleetHeads = config.redis
    ? await createFleetHeads({
        url: config.redis.url,
        keyPrefix: config.redis.keyPrefix,
        pollMs: config.upstreams.headPollMs,
        log,
      })
    : undefined
  // one chain's shared parts for the process's life: a network rebuilt by a reload takes its
  // predecessor's (its shown head included), and nothing is joined again in Redis
  const sharedByChain = new Map<number, SharedParts>()
  const sharedFor = (chainId: number): SharedParts | undefined => {
    if (!sharedCache) return undefined
    let parts = sharedByChain.get(chainId)
    if (!parts) {
      parts = sharedCache.forNetwork(chainId)
      sharedByChain.set(chainId, parts)
    }
    return parts
  }
  return {
    start: (settings, networkConfigs) => startNetworks(settings, networkConfigs, log, sharedFor, fleetHeads),
    close: async () => {
      await Promise.all([sharedCache?.close(), fleetHeads?.close()])
    },
  }
}

async function startNetworks(
  config: Config,
  networkConfigs: readonly NetworkConfig[],
  log: Logger,
  sharedFor: (chainId: number) => SharedParts | undefined,
  fleetHeads: FleetHeads | undefined,
): Promise<LiveNetwork[]> {
  const failoverMethods = new Set(config.failover.methods ?? getFailoverMethods())
  // one head tracker per network: the pool, the cache, subscriptions and the fee indexer read it
  const { headPollMs } = config.upstreams
  const built = networkConfigs.map((network) => {
    // the embedded devnet is each instance's own chain: nothing of it is shared
    const own = network.name === 'devnet' && config.devnet
    return {
      config: network,
      network: createNetwork(network, {
        upstreams: config.upstreams,
        cache: config.cache,
        failoverMethods,
        headPollMs,
        log,
        shared: own ? undefined : sharedFor(network.chainId),
        fleet: own ? undefined : fleetHeads?.forNetwork(network.chainId, network.name),
      }),
    }
  })
  const networks = built.map((each) => each.network)
  // each upstream's head, then what history it keeps (createHistoryProber), before the first call;
  // a slow node's probe goes on in the background past a bound (calls it cannot answer meanwhile
  // move on to another upstream on its refusal)
  const startWaitMs = Math.min(config.upstreams.timeoutMs, 5_000)
  const identifying: ReturnType<typeof identifyChain>[] = []
  try {
    await Promise.all(
      networks.map((network) =>
        network.heads.poll().then(() =>
          withTimeout<void>(
            (settle) => void network.history.start().then(settle, settle),
            startWaitMs,
            () => log.info({ network: network.name }, 'history probe still under way: serving meanwhile'),
          ),
        ),
      ),
    )
    // each cache learns its chain's identity (the genesis the first polls read) before serving:
    // shared answers are keyed by it
    for (const network of networks)
      identifying.push(identifyChain(network, { retryMs: headPollMs, waitMs: startWaitMs }))
    await Promise.all(identifying.map((each) => each.ready))
  } catch (err) {
    for (const each of identifying) each.stop()
    await Promise.all(networks.map((network) => network.close()))
    throw err
  }
  return built.map(({ network, config: networkConfig }, i) => ({
    network,
    config: networkConfig,
    async stop() {
      identifying[i]?.stop()
      await network.close()
    },
  }))
}
