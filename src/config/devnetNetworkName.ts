/** The network the embedded devnet is served as (beside the config's `networks`). */
export const devnetNetworkName = 'devnet'
