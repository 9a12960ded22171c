import type { Account } from '../auth/apiKey.ts'
import { OidcAmbiguousAccountError, OidcNoAccountError } from '../errors/oidcErrors.ts'

/**
 * Values of a list claim looked up at most: a person in thousands of groups costs a bounded number
 * of lookups (the first ones are read; a claim meant for tollgate names one account).
 * @internal exported for its tests
 */
export const maxClaimValues = 100

/** Account names are at most 100 characters (keys show the same limit): a longer value names none. */
const maxNameLength = 100

/**
 * The account names a person's claims give: the claim named `claim`, else, for a dotted name
 * (`realm_access.roles`), the member it reaches through objects. A string is one name; a list gives
 * its strings (other members, empty and over-long strings are no names), at most maxClaimValues of
 * them, each once. No claim, or one of another kind: none.
 */
export function accountNamesOfClaim(claims: Readonly<Record<string, unknown>>, claim: string): string[] {
  const value = Object.hasOwn(claims, claim) ? claims[claim] : memberAt(claims, claim.split('.'))
  const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value : []
  const names = new Set<string>()
  for (const each of values) {
    if (names.size === maxClaimValues) break
    if (typeof each === 'string' && each.length > 0 && each.length <= maxNameLength) names.add(each)
  }
  return [...names]
}

function memberAt(value: unknown, path: string[]): unknown {
  let at = value
  for (const name of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, name))
      return undefined
    at = (at as Record<string, unknown>)[name]
  }
  return at
}

/**
 * The one account the names name. None: OidcNoAccountError; more than one (a list claim naming two
 * accounts): OidcAmbiguousAccountError, as which one is meant is not guessed. Nothing is made.
 */
export async function matchOidcAccount(
  names: readonly string[],
  claim: string,
  findAccount: (name: string) => Promise<Account | undefined>,
): Promise<Account> {
  const found = (await Promise.all(names.map(findAccount))).filter((account) => account !== undefined)
  const [account, other] = found
  if (!account) {
    const given = names.length === 0 ? 'no such claim' : `names ${names.slice(0, 10).join(', ')}`
    throw new OidcNoAccountError(claim, { logDetails: given })
  }
  if (other) {
    throw new OidcAmbiguousAccountError(claim, {
      logDetails: `accounts ${found.map((each) => each.name).join(', ')}`,
    })
  }
  return account
}
