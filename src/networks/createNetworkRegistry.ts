import type { Network } from './createNetwork.ts'

export type NetworkRegistry = {
  all: readonly Network[]
  /**
   * The network a request is for: the `/{network}/v3/...` path prefix if there is one, else the
   * Host header (a configured host, or the network name as its first label), else the only network.
   */
  resolve(pathName: string | undefined, host: string | undefined): Network | undefined
  close(): Promise<void>
}

export function createNetworkRegistry(networks: Network[]): NetworkRegistry {
  const byName = new Map(networks.map((network) => [network.name, network]))
  const byHost = new Map(
    networks.flatMap((network) => network.hosts.map((host) => [host.toLowerCase(), network])),
  )
  const only = networks.length === 1 ? networks[0] : undefined

  function byHostHeader(host: string): Network | undefined {
    const hostname = host.replace(/:\d+$/, '').toLowerCase()
    const dot = hostname.indexOf('.')
    return byHost.get(hostname) ?? (dot > 0 ? byName.get(hostname.slice(0, dot)) : undefined) ?? only
  }
  // a client sends the same Host on every request: the last one's answer is kept
  let lastHost: string | undefined
  let lastHostNetwork: Network | undefined

  return {
    all: networks,
    resolve(pathName, host) {
      if (pathName !== undefined) return byName.get(pathName)
      if (host === undefined) return only
      if (host !== lastHost) {
        lastHostNetwork = byHostHeader(host)
        lastHost = host
      }
      return lastHostNetwork
    },
    async close() {
      await Promise.all(networks.map((network) => network.close()))
    },
  }
}
