import { toAddressGroup } from '../auth/toAddressGroup.ts'

/** What a keyed request's bytes in flight count against: its ByteBulkhead holders' shares. */
export type SharesOf = (key: string, clientAddress: string | undefined) => readonly string[]

/**
 * Its key's share, and its client address's (IPv6 by its /64, as connections are counted) unless
 * that address is one of `exempt`: a reverse proxy on this machine speaks for every client, and its
 * one share would be all of theirs.
 */
export function createSharesOf(exempt: readonly string[]): SharesOf {
  const unshared = new Set(exempt.map(toAddressGroup))
  return (key, clientAddress) => {
    const keyShare = `key:${key}`
    if (clientAddress === undefined) return [keyShare]
    const address = toAddressGroup(clientAddress)
    return unshared.has(address) ? [keyShare] : [keyShare, `address:${address}`]
  }
}
