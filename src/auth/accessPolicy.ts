import { importSPKI } from 'jose'
import type { KeySettings } from './keySettings.ts'

type JwtVerifyKey = Awaited<ReturnType<typeof importSPKI>>

/** A key's security settings compiled for the request path: sets and matchers, JWT keys imported. */
export type AccessPolicy = {
  /** undefined: every network. */
  networks: ReadonlySet<string> | undefined
  origins: readonly string[]
  userAgents: readonly string[]
  methods: ReadonlySet<string> | undefined
  contracts: ReadonlySet<string> | undefined
  /** Any allowlist entry at all: without one (and no JWT claims) a request needs no allowlist checks. */
  hasAllowlists: boolean
  secretHash: string | undefined
  requireSecret: boolean
  jwt: { required: boolean; audience: string | undefined; keys: ReadonlyMap<string, JwtVerifyKey> }
}

export async function createAccessPolicy(settings: KeySettings): Promise<AccessPolicy> {
  const { allowlists } = settings
  const keys = new Map<string, JwtVerifyKey>()
  for (const { kid, alg, pem } of settings.jwt.publicKeys) keys.set(kid, await importSPKI(pem, alg))
  return {
    networks: settings.networks.length > 0 ? new Set(settings.networks) : undefined,
    origins: allowlists.origins,
    userAgents: allowlists.userAgents,
    methods: allowlists.methods.length > 0 ? new Set(allowlists.methods) : undefined,
    contracts: allowlists.contracts.length > 0 ? new Set(allowlists.contracts) : undefined,
    hasAllowlists: Object.values(allowlists).some((entries) => entries.length > 0),
    secretHash: settings.secretHash,
    requireSecret: settings.requireSecret,
    jwt: { required: settings.jwt.required, audience: settings.jwt.audience, keys },
  }
}
