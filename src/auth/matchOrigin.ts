/**
 * Whether an Origin header matches an allowlist entry (docs/compatibility.md §4): exact host, or `*.` for any
 * subdomain; a scheme in the entry must match, a port in the entry must match.
 * Entries are stored lowercased without a trailing slash (parseAllowlistEntry).
 */
export function matchOrigin(entry: string, origin: string): boolean {
  const parsed = splitOrigin(origin.toLowerCase())
  if (!parsed) return false
  const wanted = splitOrigin(entry)
  if (!wanted) return false
  if (wanted.scheme !== undefined && wanted.scheme !== parsed.scheme) return false
  if (wanted.port !== undefined && wanted.port !== parsed.port) return false
  if (wanted.host.startsWith('*.')) return parsed.host.endsWith(wanted.host.slice(1))
  return parsed.host === wanted.host
}

function splitOrigin(
  value: string,
): { scheme: string | undefined; host: string; port: string | undefined } | undefined {
  const match = /^(?:([a-z][a-z0-9+.-]*):\/\/)?([^/:]+)(?::(\d+))?\/?$/.exec(value)
  if (!match?.[2]) return undefined
  return { scheme: match[1], host: match[2], port: match[3] }
}
