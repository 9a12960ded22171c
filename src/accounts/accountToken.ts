import { generateSecret } from '../auth/hashSecret.ts'

/** What every account token starts with: it tells one apart from a key or a key's secret at a glance. */
const prefix = 'tga_'

/**
 * A new account sign-in token: `tga_` and 32 hex characters (128 random bits, as a key's secret),
 * shown once and stored only as its hash.
 */
export function generateAccountToken(): string {
  return `${prefix}${generateSecret()}`
}

/** Whether `text` has a token's shape: anything else is refused without hashing or reading a thing. */
export function isAccountTokenShape(text: string): boolean {
  return /^tga_[0-9a-f]{32}$/.test(text)
}
