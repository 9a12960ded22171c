/**
 * The unit failed authentications are counted per: an IPv4 address as it is, an IPv6 address by its
 * /64 (one subscriber's network holds 2^64 addresses, so counting each would count nothing), an
 * IPv4-mapped IPv6 address as its IPv4.
 */
export function toAddressGroup(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown'
  // an IPv4 address (most) is known without a regular expression: it has no colon
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped?.[1]) return mapped[1]
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::')
  const headGroups = toGroups(head)
  const tailGroups = tail === undefined ? [] : toGroups(tail)
  const zeros =
    tail === undefined ? [] : Array(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill(0)
  const groups = [...headGroups, ...zeros, ...tailGroups]
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** `2001:db8` → [0x2001, 0xdb8]; an embedded IPv4 (`::1.2.3.4`) is two groups. */
function toGroups(part: string): number[] {
  if (part === '') return []
  return part
    .split(':')
    .flatMap((group) => (group.includes('.') ? [0, 0] : [Number.parseInt(group, 16) || 0]))
}
