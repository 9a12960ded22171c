import { type JWTPayload, errors as joseErrors, jwtVerify } from 'jose'
import { InvalidJwtError } from '../errors/authErrors.ts'
import type { AccessPolicy } from './accessPolicy.ts'

/** The optional claims that narrow a key's allowlists (docs/compatibility.md §4), and the token's end. */
export type JwtClaims = {
  methods: readonly string[] | undefined
  addresses: readonly string[] | undefined
  origins: readonly string[] | undefined
  userAgents: readonly string[] | undefined
  /** `exp` in ms since the epoch: the token is refused from then on (an open WebSocket is closed). */
  expiresMs: number
}

export type JwtVerifier = (token: string, policy: AccessPolicy['jwt'], keyId: number) => Promise<JwtClaims>

export type JwtVerifierOptions = {
  /** The longest a token may be valid: `exp - iat`, and `exp` from now (`auth.maxJwtLifetimeSeconds`). */
  maxLifetimeSeconds: number
  now?: () => number
}

const maxRemembered = 10_000

type Remembered = { policy: AccessPolicy['jwt']; claims: JwtClaims }

/**
 * Verifies `Authorization: Bearer` JWTs: RS256 or ES256, `kid` picks one of the key's public keys,
 * `exp` required and at most `maxLifetimeSeconds` away (from `iat` too, when present), `aud` must
 * match when the key has an audience. A verified token is remembered until it expires, so repeat
 * requests skip the signature check, but only for the policy object it was verified against: the
 * key registry builds a new one whenever the key changes (a public key removed, a new audience), so
 * a change takes effect for tokens already seen as soon as the registry has it.
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const { maxLifetimeSeconds, now = Date.now } = options
  const maxLifetimeMs = maxLifetimeSeconds * 1000
  const remembered = new Map<string, Remembered>()

  return async (token, policy, keyId) => {
    const cacheKey = `${keyId}:${token}`
    const known = remembered.get(cacheKey)
    if (known?.policy === policy && known.claims.expiresMs > now()) return known.claims
    // another policy's (or an expired) verdict says nothing about this one: it goes, whatever comes next
    if (known) remembered.delete(cacheKey)
    const payload = await verify(token, policy, now())
    const exp = payload.exp as number
    const expiresMs = exp * 1000
    if (
      expiresMs - now() > maxLifetimeMs ||
      (payload.iat !== undefined && exp - payload.iat > maxLifetimeSeconds)
    ) {
      throw new InvalidJwtError({ logDetails: `valid for longer than ${maxLifetimeSeconds} s` })
    }
    const claims: JwtClaims = {
      methods: stringList(payload.methods),
      addresses: stringList(payload.addresses)?.map((address) => address.toLowerCase()),
      origins: stringList(payload.origins),
      userAgents: stringList(payload.user_agents),
      expiresMs,
    }
    if (remembered.size >= maxRemembered) remembered.clear()
    remembered.set(cacheKey, { policy, claims })
    return claims
  }
}

/** The signature, `kid`, `exp`, `nbf` and `aud` checks: the payload, or InvalidJwtError. */
async function verify(token: string, policy: AccessPolicy['jwt'], nowMs: number): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(
      token,
      (header) => {
        const key = header.kid === undefined ? undefined : policy.keys.get(header.kid)
        if (!key) throw new InvalidJwtError({ logDetails: 'no public key with that kid' })
        return key
      },
      {
        algorithms: ['RS256', 'ES256'],
        requiredClaims: ['exp'],
        currentDate: new Date(nowMs),
        ...(policy.audience === undefined ? {} : { audience: policy.audience }),
      },
    )
    return payload
  } catch (err) {
    if (err instanceof InvalidJwtError) throw err
    const reason = err instanceof joseErrors.JOSEError ? err.code : 'malformed'
    throw new InvalidJwtError({ logDetails: reason })
  }
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new InvalidJwtError({ logDetails: 'a narrowing claim is not a list of strings' })
  }
  return value
}
