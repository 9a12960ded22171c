import type { IncomingMessage } from 'node:http'
import { BlockList, isIP } from 'node:net'

/** An address as `net` compares it: an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) as its IPv4. */
function plain(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address
}

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4')

/**
 * How the address a request comes from is read. Its connection's address, unless that is one of
 * `trustedProxies` (a load balancer in front of tollgate): then the nearest address in
 * X-Forwarded-For that is not a trusted proxy. Read from the right, because each proxy appends the
 * address it was reached from: entries left of the first untrusted one were written by the client
 * and prove nothing. A hop that is not an address ends the walk at the last one that was.
 */
export function createClientAddressOf(
  trustedProxies: readonly string[],
): (req: IncomingMessage) => string | undefined {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress
  const trusted = new BlockList()
  for (const entry of trustedProxies) {
    const [address = '', bits] = entry.split('/')
    if (bits === undefined) trusted.addAddress(plain(address), familyOf(plain(address)))
    else trusted.addSubnet(plain(address), Number(bits), familyOf(plain(address)))
  }
  const isTrusted = (address: string) => trusted.check(address, familyOf(address))
  return (req) => {
    const connection = req.socket.remoteAddress
    if (connection === undefined || !isTrusted(plain(connection))) return connection
    const header = req.headers['x-forwarded-for']
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')
    let address = connection
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = plain((hops[index] as string).trim())
      if (isIP(hop) === 0) break
      address = hop
      if (!isTrusted(hop)) break
    }
    return address
  }
}
