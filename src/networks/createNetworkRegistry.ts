import type { Network } from './createNetwork.ts'

export type NetworkRegistry = {
  /** The networks now, in config order: the same array until `replace`. */
  readonly all: readonly Network[]
  /**
   * The network a request is for: the `/{network}/v3/...` path prefix if there is one, else the
   * Host header (a configured host, or the network name as its first label), else the default
   * network (the one the un-prefixed URLs serve: getDefaultNetwork), if any.
   */
  resolve(pathName: string | undefined, host: string | undefined): Network | undefined
  /**
   * The networks new requests are for from now on (a reload), and the name of the default one: a
   * request already holding one goes on with it. Closing the networks left out is the caller's
   * (after their calls in flight).
   */
  replace(networks: readonly Network[], defaultName: string | undefined): void
  /** Closes the networks it holds now. */
  close(): Promise<void>
}

/** The networks by name and host, and `defaultName`'s: the one a request naming none goes to. */
export function createNetworkRegistry(
  initial: readonly Network[],
  initialDefault: string | undefined,
): NetworkRegistry {
  let networks = initial
  let byName = new Map<string, Network>()
  let byHost = new Map<string, Network>()
  let fallback: Network | undefined
  const index = (defaultName: string | undefined) => {
    byName = new Map(networks.map((network) => [network.name, network]))
    byHost = new Map(
      networks.flatMap((network) => network.hosts.map((host) => [host.toLowerCase(), network])),
    )
    fallback = defaultName === undefined ? undefined : byName.get(defaultName)
  }
  index(initialDefault)

  function byHostHeader(host: string): Network | undefined {
    const hostname = host.replace(/:\d+$/, '').toLowerCase()
    const dot = hostname.indexOf('.')
    return byHost.get(hostname) ?? (dot > 0 ? byName.get(hostname.slice(0, dot)) : undefined) ?? fallback
  }
  // a client sends the same Host on every request: the last one's answer is kept
  let lastHost: string | undefined
  let lastHostNetwork: Network | undefined

  return {
    get all() {
      return networks
    },
    resolve(pathName, host) {
      if (pathName !== undefined) return byName.get(pathName)
      if (host === undefined) return fallback
      if (host !== lastHost) {
        lastHostNetwork = byHostHeader(host)
        lastHost = host
      }
      return lastHostNetwork
    },
    replace(next, defaultName) {
      networks = next
      index(defaultName)
      lastHost = undefined
      lastHostNetwork = undefined
    },
    async close() {
      await Promise.all(networks.map((network) => network.close()))
    },
  }
}
