import { stringify } from 'yaml'
import { redactUrl } from '../upstreams/redactUrl.ts'

/** What a redacted secret reads as. */
const redacted = '(redacted)'

/** Keys whose string values are secrets wherever they sit in the config: admin and metrics tokens, and the like. */
const secretKey = /token|secret|password|passphrase|credential|api[-_]?key|authorization/i

/**
 * A copy of a config (or any part of it) safe to print: the values of secret-named keys are replaced,
 * node URLs (http, ws) are cut to scheme, host and port as logs show them (vendors put API keys in
 * paths and queries), and any other URL (a database's, Redis's) keeps all but its password and its
 * secret-named parameters.
 */
function redactConfig(value: unknown, key = ''): unknown {
  // a secret-named key hides all it holds (a list or an object of secrets too); switches and numbers stay
  if (secretKey.test(key) && (typeof value === 'string' || (typeof value === 'object' && value !== null)))
    return redacted
  if (Array.isArray(value)) return value.map((each) => redactConfig(each, key))
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([name, each]) => [name, redactConfig(each, name)]))
  if (typeof value !== 'string') return value
  if (/^(https?|wss?):\/\//i.test(value)) return redactUrl(value)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactPassword(value)
  return value
}

/** A URL with its password and its secret-named query parameters replaced; the rest (user, host, database) kept. */
function redactPassword(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return '(invalid url)'
  }
  const credentials =
    parsed.username === '' && parsed.password === ''
      ? ''
      : `${parsed.username}${parsed.password === '' ? '' : `:${redacted}`}@`
  // the query rewritten by hand: URLSearchParams would re-encode every parameter it kept
  const query = parsed.search
    .slice(1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0] as string
      return secretKey.test(name) ? `${name}=${redacted}` : pair
    })
    .join('&')
  return `${parsed.protocol}//${credentials}${parsed.host}${parsed.pathname}${query ? `?${query}` : ''}`
}

/** The config as `tollgate config check` prints it: redacted (redactConfig), as YAML. */
export function redactedYaml(config: unknown): string {
  return stringify(redactConfig(config))
}
