import { z } from 'zod'

/** At most this many entries in one allowlist (docs/compatibility.md §4). */
export const maxAllowlistEntries = 30
/** At most this many JWT public keys per API key (docs/compatibility.md §4). */
export const maxJwtPublicKeys = 3

const allowlist = z.array(z.string()).max(maxAllowlistEntries).default([])

/**
 * Per-key settings, stored as JSON beside the key: its own limits, secret, switches, allowlists,
 * networks and JWT keys. Parsed when keys are loaded, never on a request.
 */
export const keySettingsSchema = z.object({
  /** The key's own credits per day; 0 = the plan's. */
  dailyCredits: z.int().min(0).default(0),
  /** The key's own credits per second; 0 = the plan's. */
  creditsPerSecond: z.int().min(0).default(0),
  /** scrypt hash of the secret (see hashSecret.ts); absent: the key has no secret. */
  secretHash: z.string().optional(),
  requireSecret: z.boolean().default(false),
  /** Partner failover for every request of this key (its plan must allow failover). */
  failover: z.boolean().default(false),
  /**
   * The route headers (which upstream answered, the attempts, the cache: docs/observability.md):
   * `off`, `on` (every answer), or `asked` (answers to requests that send `X-Tollgate-Route: 1`).
   */
  routeHeader: z.enum(['off', 'on', 'asked']).default('off'),
  /** Networks this key may use; empty = all. */
  networks: z.array(z.string()).default([]),
  allowlists: z
    .object({ contracts: allowlist, userAgents: allowlist, origins: allowlist, methods: allowlist })
    .prefault({}),
  jwt: z
    .object({
      required: z.boolean().default(false),
      audience: z.string().optional(),
      publicKeys: z
        .array(z.object({ kid: z.string().min(1), alg: z.enum(['RS256', 'ES256']), pem: z.string() }))
        .max(maxJwtPublicKeys)
        .default([]),
    })
    .prefault({}),
})

export type KeySettings = z.infer<typeof keySettingsSchema>

export function parseKeySettings(json: string): KeySettings {
  return keySettingsSchema.parse(JSON.parse(json))
}
