import { AllowlistEntryError } from '../errors/adminErrors.ts'

const originPattern = /^(?:(https?):\/\/)?(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::\d+)?$/i

/**
 * A page origin as a key's origins allowlist and `server.cors.origins` take it (`example.com`,
 * `https://app.example.com`, `*.example.com`), in its stored form: lowercase, no trailing slash.
 */
export function parseOrigin(entry: string): string {
  const origin = entry.trim().replace(/\/$/, '').toLowerCase()
  if (!originPattern.test(origin)) {
    throw new AllowlistEntryError(
      `'${entry}' is not an origin (example.com, https://app.example.com, *.example.com)`,
    )
  }
  return origin
}
