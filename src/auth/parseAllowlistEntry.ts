import { AllowlistEntryError } from '../errors/adminErrors.ts'
import { parseOrigin } from '../formats/parseOrigin.ts'
import { getMethodSpec, getOfferedMethods } from '../methods/methodTable.ts'
import type { AllowlistKind } from './allowlistKind.ts'

const addressPattern = /^0x[0-9a-fA-F]{40}$/

/**
 * Checks one allowlist entry and returns its stored form (addresses lowercased, origins without a
 * trailing slash). A method entry must name a method the gateway offers: the allowlist matches
 * names exactly (no wildcards), so any other entry could never allow a call.
 */
export function parseAllowlistEntry(kind: AllowlistKind, entry: string): string {
  const value = entry.trim()
  switch (kind) {
    case 'contracts':
      if (!addressPattern.test(value)) throw new AllowlistEntryError(`'${entry}' is not a 20-byte 0x address`)
      return value.toLowerCase()
    case 'methods': {
      if (getMethodSpec(value).offered) return value
      const lower = value.toLowerCase()
      const sameLetters = getOfferedMethods().find((method) => method.toLowerCase() === lower)
      throw new AllowlistEntryError(
        sameLetters
          ? `'${entry}' is not a method tollgate offers (names are case-sensitive: ${sameLetters})`
          : `'${entry}' is not a method tollgate offers`,
      )
    }
    case 'origins':
      return parseOrigin(entry)
    case 'userAgents':
      if (value === '') throw new AllowlistEntryError('a user agent entry cannot be empty')
      return value
  }
}
