import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'

/**
 * Addresses a webhook may not reach unless the operator allows it (`alerts.privateAddresses`): a key
 * holder names the URL, and must not make the gateway post into the network it runs in (loopback,
 * private ranges, link-local cloud metadata endpoints, ...).
 */
const privateRanges = new BlockList()
const privateIpv4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const
for (const [network, prefix] of privateIpv4) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
  // the same IPv4 addresses inside IPv6 ones that reach them (an IPv4-mapped address BlockList
  // judges as IPv4 by itself): NAT64's well-known prefix (a cloud's NAT64 gateway forwards into
  // the private network too), IPv4-compatible, and 6to4
  privateRanges.addSubnet(`64:ff9b::${network}`, 96 + prefix, 'ipv6')
  privateRanges.addSubnet(`::${network}`, 96 + prefix, 'ipv6')
  privateRanges.addSubnet(`2002:${sixToFourGroups(network)}::`, 16 + prefix, 'ipv6')
}
for (const [network, prefix] of [
  ['::', 127],
  // NAT64 for local use (RFC 8215): whatever the operator maps it to
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv6')

/** An IPv4 address as the two hex groups 6to4 puts after `2002:` (`10.0.0.0` → `a00:0`). */
function sixToFourGroups(ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number)
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
}

/**
 * Whether `address` (an IP address) is loopback, private, link-local, multicast, unspecified or
 * reserved, or an IPv6 address that carries such an IPv4 address (mapped, NAT64, compatible, 6to4).
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return privateRanges.check(address, 'ipv4')
  return family === 6 && privateRanges.check(address, 'ipv6')
}

/** A URL host's address when the host is an IP address (`[::1]` unbracketed), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  return isIP(bare) === 0 ? undefined : bare
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/**
 * dns.lookup for the webhook connections: a name that resolves to a private address fails to
 * connect, so a public name pointed at an inner address does not get through either.
 */
export function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, [])
    const list = addresses as LookupAddress[]
    if (list.some((entry) => isPrivateAddress(entry.address))) {
      const refused = Object.assign(new Error(`${hostname} resolves to a private address`), {
        code: 'EPRIVATEADDRESS',
      })
      return callback(refused, [])
    }
    if ((options as { all?: boolean }).all) return callback(null, list)
    const first = list[0]
    if (!first)
      return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), [])
    callback(null, first.address, first.family)
  })
}
