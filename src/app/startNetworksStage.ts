import type { Logger } from 'pino'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { getDefaultNetwork } from '../config/getDefaultNetwork.ts'
import { createNetworkRegistry, type NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { composeStages } from './composeStages.ts'
import { createNetworkServices, type NetworkServices } from './createNetworkServices.ts'
import { createNetworkStarter, type LiveNetwork, type NetworkStarter } from './createNetworkStarter.ts'
import type { Stores } from './stores.ts'

/** The networks, and what each has beside its pool. */
export type NetworksStage = {
  /** Builds networks (at start, and for a reload); what they share lives as long as it. */
  starter: NetworkStarter
  /**
   * The networks running now, in registry order: a reload replaces its contents (createReloader),
   * and this stage's close stops the ones running then.
   */
  live: LiveNetwork[]
  networks: NetworkRegistry
  /** Each network's subscription hub and fee-history indexer. */
  services: NetworkServices
  /** The hubs and indexers stop, then the networks, then what they share (the Redis cache). */
  close(): Promise<void>
}

export type NetworksStageDeps = {
  stores: Pick<Stores, 'feeHistory' | 'lead'>
  /** The embedded devnet's network, beside the config's. */
  embedded: NetworkConfig | undefined
  /** False in a worker that does not index fee history: another worker of the same gateway does. */
  indexesFees: boolean
  log: Logger
}

/** Every network polled and its chain identified before the gateway serves; then its hub and indexer. */
export async function startNetworksStage(config: Config, deps: NetworksStageDeps): Promise<NetworksStage> {
  const { embedded, log } = deps
  return composeStages(log, async (stages) => {
    const starter = await stages.start(() => createNetworkStarter(config, log))
    const networkConfigs = embedded ? [...config.networks, embedded] : config.networks
    const { live } = await stages.start(async () => {
      const started = await starter.start(config, networkConfigs)
      return { live: started, close: () => stopAll(started) }
    })
    const networks = createNetworkRegistry(
      live.map((each) => each.network),
      getDefaultNetwork(config),
    )
    const services = await stages.start(() => {
      const made = createNetworkServices({ stores: deps.stores, indexesFees: deps.indexesFees, log })
      for (const each of live) made.add(each, config)
      return made
    })
    return { starter, live, networks, services }
  })
}

async function stopAll(live: readonly LiveNetwork[]): Promise<void> {
  await Promise.all(live.map((each) => each.stop()))
}
