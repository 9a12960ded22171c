import type { Logger } from 'pino'
import { createSharedCache } from '../cache/createSharedCache.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'
import { getFailoverMethods } from '../methods/methodTable.ts'
import { createNetwork } from '../networks/createNetwork.ts'
import { createNetworkRegistry, type NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { identifyChain } from '../networks/identifyChain.ts'

export type StartNetworksOptions = {
  log: Logger
  /** Told each step that stops what was started, in the order started (createApp runs them in reverse). */
  onClose(step: () => Promise<void> | void): void
}

/**
 * The networks of createApp, each with its upstream pool, head tracker and caches (shared through
 * Redis when configured): every upstream's head polled, its history probed, and the chain
 * identified before the gateway serves.
 */
export async function startNetworks(
  config: Config,
  networkConfigs: readonly NetworkConfig[],
  options: StartNetworksOptions,
): Promise<{ networks: NetworkRegistry; headPollMs: number }> {
  const { log } = options
  const failoverMethods = new Set(config.failover.methods ?? getFailoverMethods())
  // one head tracker per network: the pool, the cache, subscriptions and the fee indexer read it
  const { headPollMs } = config.upstreams
  // with Redis, immutable answers and the highest head shown are shared by every instance
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
  if (sharedCache) options.onClose(() => sharedCache.close())
  const networks = createNetworkRegistry(
    networkConfigs.map((network) =>
      createNetwork(network, {
        upstreams: config.upstreams,
        cache: config.cache,
        failoverMethods,
        headPollMs,
        log,
        // the embedded devnet is each instance's own chain: nothing of it is shared
        shared:
          network.name === 'devnet' && config.devnet ? undefined : sharedCache?.forNetwork(network.chainId),
      }),
    ),
  )
  options.onClose(() => networks.close())
  // each upstream's head, then what history it keeps (createHistoryProber), before the first call;
  // a slow node's probe goes on in the background past a bound (calls it cannot answer meanwhile
  // move on to another upstream on its refusal)
  const startWaitMs = Math.min(config.upstreams.timeoutMs, 5_000)
  await Promise.all(
    networks.all.map((network) =>
      network.heads.poll().then(() =>
        withTimeout<void>(
          (settle) => void network.history.start().then(settle, settle),
          startWaitMs,
          () => log.info({ network: network.name }, 'history probe still under way: serving meanwhile'),
        ),
      ),
    ),
  )
  // each cache learns its chain's identity (the genesis the first polls read) before serving: shared
  // answers are keyed by it
  const identifying = networks.all.map((network) =>
    identifyChain(network, { retryMs: headPollMs, waitMs: startWaitMs }),
  )
  options.onClose(() => {
    for (const each of identifying) each.stop()
  })
  await Promise.all(identifying.map((each) => each.ready))
  return { networks, headPollMs }
}
