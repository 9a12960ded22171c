import { createHash } from 'node:crypto'

/**
 * How instances of a fleet name a network's upstreams to each other (HeadReport.members): by the
 * configured `name`, else by a hash of the URL (never the URL: it may carry credentials). The same
 * key twice in one network gets its place appended, so that each member has its own.
 */
export function toMemberKeys(upstreams: readonly { url: string; name?: string | undefined }[]): string[] {
  const seen = new Set<string>()
  return upstreams.map((upstream, index) => {
    const key =
      upstream.name ?? `#${createHash('sha256').update(upstream.url).digest('base64url').slice(0, 16)}`
    const own = seen.has(key) ? `${key}~${index}` : key
    seen.add(own)
    return own
  })
}
