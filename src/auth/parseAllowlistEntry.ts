import type { AllowlistKind } from './keySettings.ts'

export class AllowlistEntryError extends Error {
  override name = 'AllowlistEntryError'
}

const addressPattern = /^0x[0-9a-fA-F]{40}$/
const methodPattern = /^[a-zA-Z][a-zA-Z0-9]*_[a-zA-Z0-9_]+$/
const originPattern = /^(?:(https?):\/\/)?(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::\d+)?$/i

/** Checks one allowlist entry and returns its stored form (addresses lowercased, origins without a trailing slash). */
export function parseAllowlistEntry(kind: AllowlistKind, entry: string): string {
  const value = entry.trim()
  switch (kind) {
    case 'contracts':
      if (!addressPattern.test(value)) throw new AllowlistEntryError(`'${entry}' is not a 20-byte 0x address`)
      return value.toLowerCase()
    case 'methods':
      if (!methodPattern.test(value))
        throw new AllowlistEntryError(`'${entry}' is not a JSON-RPC method name`)
      return value
    case 'origins': {
      const trimmed = value.replace(/\/$/, '').toLowerCase()
      if (!originPattern.test(trimmed)) {
        throw new AllowlistEntryError(
          `'${entry}' is not an origin (example.com, https://app.example.com, *.example.com)`,
        )
      }
      return trimmed
    }
    case 'userAgents':
      if (value === '') throw new AllowlistEntryError('a user agent entry cannot be empty')
      return value
  }
}
