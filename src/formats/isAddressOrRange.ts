import { isIP } from 'node:net'

/**
 * Whether `entry` is an address or a CIDR range (`10.0.0.0/8`, `fd00::/8`): what
 * `server.trustedProxies` takes.
 */
export function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/')
  const version = isIP(address)
  if (version === 0 || extra !== undefined) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 6 ? 128 : 32)
}
