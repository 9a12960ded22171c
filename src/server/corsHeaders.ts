import { matchOrigin } from '../auth/matchOrigin.ts'

export type CorsOptions = {
  enabled: boolean
  /** Pages allowed to call at all; empty: any page. */
  origins: readonly string[]
  maxAgeSeconds: number
}

/** What a browser may read of an answer beyond the simple headers: the credit and retry hints. */
const exposedHeaders =
  'X-Credits-Charged, X-Credits-Remaining, X-RateLimit-Reset, Retry-After, X-Served-By, ' +
  'X-Tollgate-Upstream, X-Tollgate-Attempts, X-Tollgate-Cache'
const allowedMethods = 'POST, GET, OPTIONS'
const allowedHeaders = [
  'content-type',
  'authorization',
  'enable-failover',
  'x-tollgate-route',
  'traceparent',
  'tracestate',
]

/**
 * The CORS headers of an answer to a browser request (one that sent `Origin`), errors included, so
 * a page can read a 402 or a 403. Undefined when the request is not a browser's or the origin is not
 * allowed by config. Which pages a key serves is its origins allowlist's decision, not this one's.
 */
export function corsHeaders(
  origin: string | undefined,
  options: CorsOptions,
): Record<string, string> | undefined {
  if (!options.enabled || origin === undefined || !isAllowed(origin, options)) return undefined
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': exposedHeaders,
    vary: 'Origin',
  }
}

/**
 * The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`): the methods, the
 * headers tollgate reads (and any others the page asks for: they change nothing), and how long the
 * browser may keep this answer.
 */
export function preflightHeaders(
  origin: string | undefined,
  requestedHeaders: string | undefined,
  options: CorsOptions,
): Record<string, string> | undefined {
  const headers = corsHeaders(origin, options)
  if (!headers) return undefined
  const allowed = new Set(allowedHeaders)
  for (const name of requestedHeaders?.split(',') ?? []) {
    const trimmed = name.trim().toLowerCase()
    if (trimmed !== '') allowed.add(trimmed)
  }
  return {
    ...headers,
    'access-control-allow-methods': allowedMethods,
    'access-control-allow-headers': [...allowed].join(', '),
    'access-control-max-age': String(options.maxAgeSeconds),
  }
}

function isAllowed(origin: string, options: CorsOptions): boolean {
  return options.origins.length === 0 || options.origins.some((entry) => matchOrigin(entry, origin))
}
