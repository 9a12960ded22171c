import type { ApiKey } from '../auth/apiKey.ts'
import { ensureDemoKey } from '../auth/ensureDemoKey.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { DevnetConfig, NetworkConfig } from '../config/configSchema.ts'
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
    // loaded here, not with the gateway: viem and its chain list are some 20 MB of heap that only the
    // seeding uses (a gateway in front of other nodes never needs them, and a heap that size is a
    // full collection that much dearer)
    const fixtures = config.seed ? await (await import('./seedDevnet.ts')).seedDevnet(anvil.url) : undefined
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
  return { name: 'devnet', chainId, upstreams: [{ url, ws: wsUrl, name: 'anvil' }], partners: [], hosts: [] }
}
