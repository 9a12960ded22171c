/**
 * A client address as the request log keeps it: an IPv4 address cut to its /24 (`203.0.113.0/24`),
 * an IPv6 address to its /48 (`2001:db8:1::/48`), an IPv4-mapped IPv6 address as its IPv4. Enough to
 * tell a network apart, not a subscriber. Anything that is not an address is kept as `unknown`.
 */
export function truncateClientAddress(address: string | undefined): string | null {
  if (address === undefined || address === '') return null
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const v4 = mapped?.[1] ?? address
  if (!v4.includes(':')) {
    const parts = v4.split('.')
    if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return 'unknown'
    return `${parts[0]}.${parts[1]}.${parts[2]}.0/24`
  }
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::')
  const headGroups = toGroups(head)
  const tailGroups = tail === undefined ? [] : toGroups(tail)
  if (headGroups === undefined || tailGroups === undefined) return 'unknown'
  const zeros =
    tail === undefined ? [] : Array(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill(0)
  const groups = [...headGroups, ...zeros, ...tailGroups]
  if (groups.length !== 8) return 'unknown'
  return `${groups
    .slice(0, 3)
    .map((group) => group.toString(16))
    .join(':')}::/48`
}

/** `2001:db8` → [0x2001, 0xdb8]; an embedded IPv4 (`::1.2.3.4`) is two groups; undefined when not hex groups. */
function toGroups(part: string): number[] | undefined {
  if (part === '') return []
  const groups: number[] = []
  for (const group of part.split(':')) {
    if (group.includes('.')) groups.push(0, 0)
    else if (/^[0-9a-f]{1,4}$/i.test(group)) groups.push(Number.parseInt(group, 16))
    else return undefined
  }
  return groups
}
