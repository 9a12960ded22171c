import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'

/** Path names and Host headers remembered, each: a client sending ever new Hosts is resolved anew each time. */
const maxRemembered = 256

/**
 * The name of the network a request was for (`(none)` when none was named or found), as the
 * registry resolves it, remembered per path name and per Host so that counting an answer's status
 * on the dashboard costs a map lookup, not a Host parse.
 */
export function createNetworkNamer(
  networks: NetworkRegistry,
): (pathName: string | undefined, host: string | undefined) => string {
  const byPath = new Map<string, string>()
  const byHost = new Map<string | undefined, string>()
  return (pathName, host) => {
    const remembered = pathName === undefined ? byHost.get(host) : byPath.get(pathName)
    if (remembered !== undefined) return remembered
    const name = networks.resolve(pathName, host)?.name ?? '(none)'
    const into = pathName === undefined ? byHost : byPath
    if (into.size < maxRemembered) into.set(pathName ?? host, name)
    return name
  }
}
