import { type JWTPayload, errors as joseErrors, jwtVerify } from 'jose'
import { InvalidJwtError } from '../errors/errors.ts'
import type { AccessPolicy } from './accessPolicy.ts'

/** The optional claims that narrow a key's allowlists (docs/compatibility.md §4). */
export type JwtClaims = {
  methods: readonly string[] | undefined
  addresses: readonly string[] | undefined
  origins: readonly string[] | undefined
  userAgents: readonly string[] | undefined
}

export type JwtVerifier = (token: string, policy: AccessPolicy['jwt'], keyId: number) => Promise<JwtClaims>

const maxRemembered = 10_000

/**
 * Verifies `Authorization: Bearer` JWTs: RS256 or ES256, `kid` picks one of the key's public keys,
 * `exp` required, `aud` must match when the key has an audience. A verified token is remembered
 * until it expires, so repeat requests skip the signature check.
 */
export function createJwtVerifier(now: () => number = Date.now): JwtVerifier {
  const remembered = new Map<string, { claims: JwtClaims; expiresMs: number }>()

  return async (token, policy, keyId) => {
    const cacheKey = `${keyId}:${token}`
    const known = remembered.get(cacheKey)
    if (known && known.expiresMs > now()) return known.claims
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : policy.keys.get(header.kid)
          if (!key) throw new InvalidJwtError({ logDetails: 'no public key with that kid' })
          return key
        },
        {
          algorithms: ['RS256', 'ES256'],
          requiredClaims: ['exp'],
          currentDate: new Date(now()),
          ...(policy.audience === undefined ? {} : { audience: policy.audience }),
        },
      ))
    } catch (err) {
      if (err instanceof InvalidJwtError) throw err
      const reason = err instanceof joseErrors.JOSEError ? err.code : 'malformed'
      throw new InvalidJwtError({ logDetails: reason })
    }
    const claims: JwtClaims = {
      methods: stringList(payload.methods),
      addresses: stringList(payload.addresses)?.map((address) => address.toLowerCase()),
      origins: stringList(payload.origins),
      userAgents: stringList(payload.user_agents),
    }
    if (remembered.size >= maxRemembered) remembered.clear()
    remembered.set(cacheKey, { claims, expiresMs: (payload.exp as number) * 1000 })
    return claims
  }
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new InvalidJwtError({ logDetails: 'a narrowing claim is not a list of strings' })
  }
  return value
}
