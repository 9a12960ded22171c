import { ProjectSettingsError } from '../errors/authErrors.ts'
import type { Contracts } from '../methods/methodContracts.ts'
import type { Authentication } from './authenticate.ts'
import type { KeyEntry } from './createKeyRegistry.ts'
import { matchOrigin } from './matchOrigin.ts'

/** The per-call checks left once a request passed: method and contract allowlists (and JWT narrowing). */
export type CallGuard = {
  methods: readonly ReadonlySet<string>[]
  contracts: readonly ReadonlySet<string>[]
}

export type RequestFacts = { networkName: string; origin: string | undefined; userAgent: string | undefined }

/**
 * Request-level checks (docs/compatibility.md §4): the key's networks, then (unless the right secret was sent)
 * the origin and user-agent allowlists and the JWT's narrowing claims. Kinds are AND-ed, entries of
 * one kind OR-ed, an empty kind allows all. Returns what each call must still pass, if anything.
 */
export function authorizeRequest(
  entry: KeyEntry,
  auth: Authentication,
  facts: RequestFacts,
): CallGuard | undefined {
  const { access } = entry
  if (access.networks && !access.networks.has(facts.networkName)) {
    throw new ProjectSettingsError({ logDetails: 'network not enabled for the key' })
  }
  const { claims } = auth
  if (auth.secretVerified || (!access.hasAllowlists && claims === undefined)) return undefined
  for (const origins of [access.origins, claims?.origins]) {
    if (!origins || origins.length === 0) continue
    const origin = facts.origin
    if (origin === undefined || !origins.some((entry) => matchOrigin(entry.toLowerCase(), origin))) {
      throw new ProjectSettingsError({ logDetails: 'origin not allowed' })
    }
  }
  for (const agents of [access.userAgents, claims?.userAgents]) {
    if (!agents || agents.length === 0) continue
    const agent = facts.userAgent
    if (agent === undefined || !agents.some((entry) => agent.includes(entry))) {
      throw new ProjectSettingsError({ logDetails: 'user agent not allowed' })
    }
  }
  const methods = [access.methods, claims?.methods && new Set(claims.methods)].filter(
    (set): set is ReadonlySet<string> => set !== undefined,
  )
  const contracts = [access.contracts, claims?.addresses && new Set(claims.addresses)].filter(
    (set): set is ReadonlySet<string> => set !== undefined,
  )
  return methods.length === 0 && contracts.length === 0 ? undefined : { methods, contracts }
}

/**
 * Per-call checks: the method must be on every method list. Under a contracts allowlist, a call
 * must touch no contract, or name the contracts it touches (at least one), each on every contract
 * list; a call whose contracts cannot be told is refused (docs/compatibility.md §4). A filter's
 * contracts were checked when it was made: its id is sealed to the lists it was made under.
 */
export function authorizeCall(
  guard: CallGuard,
  method: string,
  contracts: Contracts,
  params: unknown[],
): void {
  for (const methods of guard.methods) {
    if (!methods.has(method)) throw new ProjectSettingsError({ logDetails: 'method not allowed' })
  }
  if (guard.contracts.length === 0 || contracts === 'none' || contracts === 'filter') return
  const touched = contracts === 'unchecked' ? contracts : contracts(params)
  if (touched === 'none') return
  if (touched === 'unchecked') {
    throw new ProjectSettingsError({ logDetails: 'call cannot be checked against the contract allowlist' })
  }
  const addresses = touched.map((address) => address.toLowerCase())
  for (const allowed of guard.contracts) {
    if (addresses.length === 0 || !addresses.every((address) => allowed.has(address))) {
      throw new ProjectSettingsError({ logDetails: 'contract address not allowed' })
    }
  }
}
