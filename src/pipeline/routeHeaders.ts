import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { type Attempt, CallTrail } from '../upstreams/CallTrail.ts'
import type { KeyRequest } from './authorizeKeyRequest.ts'
import type { CallTrails } from './RequestTrace.ts'

/** The longest value of one route header: a long batch's list ends with `...` there. */
const maxHeaderChars = 4096

/** Trails that only record: for the route header of a request that is not traced. */
export const recordingTrails: CallTrails = {
  start: () => new CallTrail(undefined),
  end: () => {},
}

/**
 * Whether a request's answer carries the route headers: its key's `routeHeader` is `on`, or `asked`
 * and the request sends `X-Tollgate-Route: 1` (or `true`). Never by default.
 */
export function wantsRouteHeaders(key: KeyEntry, request: KeyRequest): boolean {
  const setting = key.apiKey.settings.routeHeader
  if (setting === 'on') return true
  const asked = setting === 'asked' ? request.headers?.['x-tollgate-route'] : undefined
  if (typeof asked !== 'string') return false
  const value = asked.trim().toLowerCase()
  return value === '1' || value === 'true'
}

/**
 * The route headers of an answer, as names and values one after the other: which upstream answered
 * each call (`X-Tollgate-Upstream`), the attempts made (`X-Tollgate-Attempts`: `name=outcome`, a
 * hedge marked `+`, in the order they started) and the cache's part (`X-Tollgate-Cache`). A batch's
 * headers list its calls in call order, comma-separated, `-` for a call with nothing to say (refused
 * before it ran, answered here). Upstreams are named by their configured name (else `#N`, their
 * place in the network's list), partners as `partner`: never a URL.
 */
export function routeHeaders(trails: readonly (CallTrail | undefined)[]): string[] {
  const upstreams: string[] = []
  const attempts: string[] = []
  const caches: string[] = []
  for (const trail of trails) {
    const answered = trail?.answeredBy()
    upstreams.push(answered ? nameOf(answered) : '-')
    attempts.push(trail && trail.attempts.length > 0 ? trail.attempts.map(attemptText).join(' ') : '-')
    caches.push(trail?.cache ?? (trail ? 'none' : '-'))
  }
  return [
    'x-tollgate-upstream',
    capped(upstreams),
    'x-tollgate-attempts',
    capped(attempts),
    'x-tollgate-cache',
    capped(caches),
  ]
}

function attemptText(attempt: Attempt): string {
  return `${attempt.hedge ? '+' : ''}${nameOf(attempt)}=${attempt.outcome ?? 'pending'}`
}

/** An upstream's name as a header shows it: a partner is `partner`; outside `A-Za-z0-9._~#-`, `_`. */
function nameOf(attempt: Attempt): string {
  return attempt.partner ? 'partner' : attempt.upstream.replace(/[^\w.~#-]/g, '_')
}

/** At most `maxHeaderChars`: whole calls and `, ...`, or (one call longer than that) its start and `...`. */
function capped(values: string[]): string {
  const text = values.join(', ')
  if (text.length <= maxHeaderChars) return text
  const cut = text.lastIndexOf(', ', maxHeaderChars - 5)
  if (cut <= 0) return `${text.slice(0, maxHeaderChars - 3)}...`
  return `${text.slice(0, cut)}, ...`
}
