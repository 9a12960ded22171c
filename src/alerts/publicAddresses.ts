import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'

/**
 * Addresses a webhook may not reach unless the operator allows it (`alerts.privateAddresses`): a key
 * holder names the URL, and must not make the gateway post into the network it runs in (loopback,
 * private ranges, link-local cloud metadata endpoints, ...).
 */
const privateRanges = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 3],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv6')

/** Whether `address` (an IP address) is loopback, private, link-local, multicast or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return privateRanges.check(address, 'ipv4')
  if (family !== 6) return false
  // an IPv4 address written as IPv6 is judged as the IPv4 address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped?.[1]) return privateRanges.check(mapped[1], 'ipv4')
  return privateRanges.check(address, 'ipv6')
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
