import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import { createFeeIndexer, type FeeIndexer } from '../gas/createFeeIndexer.ts'
import { createSharedFeeIndexer } from '../gas/createSharedFeeIndexer.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { RetiredStage } from '../pipeline/handleSocketUpgrade.ts'
import type { Leadership } from '../store/leadership.ts'
import { createSubscriptionHub, type SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import type { LiveNetwork } from './createNetworkStarter.ts'
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
  /**
   * Starts a network's hub and (when the Gas API is on) its indexer, on the config running now, in
   * place of those of the network it `replaces` (a reload rebuilt it) at once: the new indexer
   * serves the old one's window while the chain is the same (same genesis block), and starts
   * indexing once the old one has stopped (one indexer of a chain at a time in a process).
   */
  add(live: LiveNetwork, config: Config, replaces?: Network): void
  /**
   * A reload replaced or removed it: new connections no longer get its hub, its indexer stops (in
   * the background), and the connections opened on it are told (`leaving`).
   */
  leave(network: Network): void
  /** It stops: its hub closes, and the connections still on it are told (`stopped`). */
  retire(network: Network): void
  /**
   * `listener` is told each stage `network` reaches (leave, retire): at once the stage it has
   * reached already. The returned function stops listening.
   */
  onRetired(network: Network, listener: (stage: RetiredStage) => void): () => void
  close(): Promise<void>
}

type Parts = { hub: SubscriptionHub; indexer: FeeIndexer | undefined; stopped?: Promise<void> }

/** A worker that does not index fee history: another worker of the same gateway does. */
const neverLeads: Leadership = { held: () => false, onChange: () => () => {} }

/** What each network has beside its pool: a subscription hub and a fee-history indexer. */
export function createNetworkServices(options: NetworkServicesOptions): NetworkServices {
  const { stores, log } = options
  const hubs = new Map<string, SubscriptionHub>()
  const indexers = new Map<number, FeeIndexer>()
  const owned = new Map<Network, Parts>()
  const listeners = new Map<Network, Set<(stage: RetiredStage) => void>>()
  const stages = new WeakMap<Network, RetiredStage>()
  /** Indexers stopping in the background: close() waits for them. */
  const stopping = new Set<Promise<void>>()

  function stopIndexer(parts: Parts): Promise<void> {
    if (!parts.stopped) {
      const stopped = (parts.indexer?.stop() ?? Promise.resolve())
        .catch((err) => log.warn({ err }, 'stopping a fee indexer failed'))
        .finally(() => stopping.delete(stopped))
      stopping.add(stopped)
      parts.stopped = stopped
    }
    return parts.stopped
  }

  function tell(network: Network, stage: RetiredStage): void {
    stages.set(network, stage)
    const told = [...(listeners.get(network) ?? [])]
    if (stage === 'stopped') listeners.delete(network)
    for (const listener of told) listener(stage)
  }

  return {
    hubs,
    indexers,
    add({ network, config: networkConfig }, config, replaces) {
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
        const before = replaces && owned.get(replaces)
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
          seed: replaces && sameChain(replaces, network) ? before?.indexer?.window() : undefined,
          log,
        })
        indexers.set(network.chainId, indexer)
        const started = indexer
        if (before) void stopIndexer(before).then(() => owned.has(network) && started.start())
        else indexer.start()
      }
      owned.set(network, { hub, indexer })
    },
    leave(network) {
      const parts = owned.get(network)
      if (parts) {
        if (hubs.get(network.name) === parts.hub) hubs.delete(network.name)
        if (parts.indexer && indexers.get(network.chainId) === parts.indexer) {
          // another network on the same chain, still configured, serves the chain's Gas API on
          const other = [...owned].find(
            ([each, { indexer }]) =>
              each !== network && each.chainId === network.chainId && indexer && !stages.has(each),
          )?.[1].indexer
          if (other) indexers.set(network.chainId, other)
          else indexers.delete(network.chainId)
        }
        void stopIndexer(parts)
      }
      tell(network, 'leaving')
    },
    retire(network) {
      const parts = owned.get(network)
      owned.delete(network)
      if (parts) void stopIndexer(parts)
      tell(network, 'stopped')
      parts?.hub.close()
    },
    onRetired(network, listener) {
      const stage = stages.get(network)
      if (stage) listener(stage)
      if (stage === 'stopped') return () => {}
      let set = listeners.get(network)
      if (!set) {
        set = new Set()
        listeners.set(network, set)
      }
      set.add(listener)
      return () => {
        listeners.get(network)?.delete(listener)
      }
    },
    async close() {
      const parts = [...owned.values()]
      owned.clear()
      await Promise.all([...parts.map(stopIndexer), ...stopping])
      for (const each of parts) each.hub.close()
    },
  }
}

/** The same chain: the same id and the same genesis block (not a chain restarted under the id). */
function sameChain(a: Network, b: Network): boolean {
  const genesis = a.heads.genesis()
  return a.chainId === b.chainId && genesis !== undefined && genesis === b.heads.genesis()
}
