import type { Config } from './configSchema.ts'
import { devnetNetworkName } from './devnetNetworkName.ts'

/**
 * The network the un-prefixed URLs serve (`/v3/KEY`, `/ws/v3/KEY`, and a request whose Host header no
 * network claims), undefined for none: `defaultNetwork` when set (`false`: none); else the embedded
 * devnet when it runs (the network its demo key's snippets use, which no reload removes); else the
 * first of `networks`. Adding a network after the first never changes it; a reload that would change
 * it without the new file naming it is refused (planReload).
 */
export function getDefaultNetwork(
  config: Pick<Config, 'defaultNetwork' | 'devnet' | 'networks'>,
): string | undefined {
  if (config.defaultNetwork !== undefined)
    return config.defaultNetwork === false ? undefined : config.defaultNetwork
  if (config.devnet) return devnetNetworkName
  return config.networks[0]?.name
}
