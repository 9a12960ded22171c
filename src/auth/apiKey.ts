import { randomBytes } from 'node:crypto'

/**
 * An API key record. `settings` is where per-key options (limits, allowlists, secret hash, networks)
 * grow without a schema change for each; the plans-and-credits issue fills it.
 */
export type ApiKey = {
  id: number
  key: string
  name: string
  plan: string
  settings: Record<string, unknown>
  createdAt: Date
  revokedAt: Date | null
}

export type CreateKeyInput = { name?: string; plan?: string; key?: string }

/** Keys are 32 lowercase hex characters (16 random bytes), the shape hosted services use. */
export function generateApiKey(): string {
  return randomBytes(16).toString('hex')
}

export const apiKeyPattern = /^[0-9a-f]{32}$/
