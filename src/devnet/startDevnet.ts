import type { ApiKey } from '../auth/apiKey.ts'
import { ensureDemoKey } from '../auth/ensureDemoKey.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { DevnetConfig, NetworkConfig } from '../config/configSchema.ts'
import { devnetNetworkName } from '../config/devnetNetworkName.ts'
import type { DevnetFixtures } from './seedDevnet.ts'
import { setIntervalMining } from './setIntervalMining.ts'
import { type Anvil, startAnvil } from './startAnvil.ts'

export type Devnet = { anvil: Anvil; fixtures: DevnetFixtures | undefined; demoKey: ApiKey }

/** Where the devnet answers (with --workers, the primary tells every worker). */
export type DevnetEndpoint = { url: string; wsUrl: string; chainId: number }

/**
 * The embedded devnet: anvil on a free port, seeded with the demo contract and transactions
 * (`seed`), mining a block every `blockTimeSeconds` (0: one per transaction), and the demo key
 * (made once, kept across restarts). Anvil is stopped again if a later step fails.
 */
export async function startDevnet(
  config: DevnetConfig,
  keys: { store: KeyStore; admin: KeyAdmin },
): Promise<Devnet> {
  const anvil = await startAnvil()
  try {
    // imported here, not with the gateway: viem and its list of chains, which only the seeding uses,
    // are over 10 MB of heap that a gateway in front of other nodes would carry into every full
    // collection
    const seed = config.seed ? (await import('./seedDevnet.ts')).seedDevnet : undefined
    const fixtures = seed ? await seed(anvil.url) : undefined
    if (config.blockTimeSeconds > 0) await setIntervalMining(anvil.url, config.blockTimeSeconds)
    const demoKey = await ensureDemoKey(keys.store, keys.admin)
    return { anvil, fixtures, demoKey }
  } catch (err) {
    await anvil.stop()
    throw err
  }
}

/** The network the devnet is served as: `devnet`, on its one anvil. */
export function devnetNetwork({ url, wsUrl, chainId }: DevnetEndpoint): NetworkConfig {
  return {
    name: devnetNetworkName,
    chainId,
    upstreams: [{ url, ws: wsUrl, name: 'anvil' }],
    partners: [],
    hosts: [],
  }
}
