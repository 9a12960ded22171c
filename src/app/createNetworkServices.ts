import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import { createFeeIndexer, type FeeIndexer } from '../gas/createFeeIndexer.ts'
import { createSharedFeeIndexer } from '../gas/createSharedFeeIndexer.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { Leadership } from '../store/leadership.ts'
import { createSubscriptionHub, type SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import type { LiveNetwork } from './startNetworks.ts'
import type { Stores } from './stores.ts'

export type NetworkServicesOptions = {
  stores: Pick<Stores, 'feeHistory' | 'lead'>
  /** False in a worker that does not index fee history: another worker of the same gateway does. */
  indexesFees: boolean
  log: Logger
}

export type NetworkServices = {
  /** Subscription hubs by network name: the network new connections get. */
  hubs: ReadonlyMap<string, SubscriptionHub>
  /** Fee-history indexers by chain id. */
  indexers: ReadonlyMap<number, FeeIndexer>
  /** Starts a network's hub and (when the Gas API is on) its indexer, on the config running now. */
  add(live: LiveNetwork, config: Config): void
  /** Its indexer stops and new connections no longer get its hub (a reload replaced or removed it). */
  detach(network: Network): Promise<void>
  /**
   * Its hub closes, and the connections opened on it are told (`onRetired` listeners): the network
   * is stopping.
   */
  retire(network: Network): void
  /** Called once when `network` is retired; the returned function stops listening. */
  onRetired(network: Network, listener: () => void): () => void
  close(): Promise<void>
}

/** A worker that does not index fee history: another worker of the same gateway does. */
const neverLeads: Leadership = { held: () => false, onChange: () => () => {} }

/** What each network has beside its pool: a subscription hub and a fee-history indexer. */
export function createNetworkServices(options: NetworkServicesOptions): NetworkServices {
  const { stores, log } = options
  const hubs = new Map<string, SubscriptionHub>()
  const indexers = new Map<number, FeeIndexer>()
  const owned = new Map<Network, { hub: SubscriptionHub; indexer: FeeIndexer | undefined }>()
  const retiredListeners = new Map<Network, Set<() => void>>()

  return {
    hubs,
    indexers,
    add({ network, config: networkConfig }, config) {
      const hub = createSubscriptionHub({
        network,
        wsUrls: networkConfig.upstreams.flatMap((upstream) =>
          upstream.ws === undefined ? [] : [upstream.ws],
        ),
        requestTimeoutMs: config.upstreams.attemptTimeoutMs,
        log,
      })
      hubs.set(network.name, hub)
      let indexer: FeeIndexer | undefined
      if (config.gas.enabled) {
        // one instance on the database indexes each chain; the others read what it stores
        indexer = createSharedFeeIndexer({
          network,
          createIndexer: () =>
            createFeeIndexer({
              network,
              store: stores.feeHistory,
              windowBlocks: config.gas.windowBlocks,
              chunkBlocks: config.gas.chunkBlocks,
              pollMs: config.upstreams.headPollMs,
              log,
            }),
          leadership: options.indexesFees ? stores.lead(`fee-indexer:${network.chainId}`) : neverLeads,
          store: stores.feeHistory,
          windowBlocks: config.gas.windowBlocks,
          log,
        })
        indexers.set(network.chainId, indexer)
        indexer.start()
      }
      owned.set(network, { hub, indexer })
    },
    async detach(network) {
      const parts = owned.get(network)
      if (!parts) return
      if (hubs.get(network.name) === parts.hub) hubs.delete(network.name)
      if (parts.indexer && indexers.get(network.chainId) === parts.indexer) indexers.delete(network.chainId)
      await parts.indexer?.stop()
    },
    retire(network) {
      const listeners = retiredListeners.get(network)
      retiredListeners.delete(network)
      for (const listener of listeners ?? []) listener()
      owned.get(network)?.hub.close()
      owned.delete(network)
    },
    onRetired(network, listener) {
      let listeners = retiredListeners.get(network)
      if (!listeners) {
        listeners = new Set()
        retiredListeners.set(network, listeners)
      }
      listeners.add(listener)
      return () => {
        retiredListeners.get(network)?.delete(listener)
      }
    },
    async close() {
      await Promise.all([...owned.values()].map((parts) => parts.indexer?.stop()))
      for (const parts of owned.values()) parts.hub.close()
      owned.clear()
    },
  }
}
