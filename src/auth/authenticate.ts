import { InvalidJwtError, InvalidKeyError, InvalidSecretError } from '../errors/authErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import type { AccessPolicy } from './accessPolicy.ts'
import type { AuthFailureLimiter } from './createAuthFailureLimiter.ts'
import type { JwtClaims, JwtVerifier } from './createJwtVerifier.ts'
import type { KeyEntry } from './createKeyRegistry.ts'
import type { SecretVerifier } from './createSecretVerifier.ts'
import { noSecretHash } from './hashSecret.ts'
import { parseBasicAuth } from './parseBasicAuth.ts'

export type Authentication = {
  /** The request carried the key's right secret: the allowlists do not apply. */
  secretVerified: boolean
  /** Claims of a verified JWT, which narrow the allowlists. */
  claims: JwtClaims | undefined
}

/** What authentication reads of a key: its id and value, and what it requires. */
export type AuthenticatedKey = { apiKey: Pick<KeyEntry['apiKey'], 'id' | 'key'>; access: AccessPolicy }

export type AuthenticateDeps = {
  verifySecret: SecretVerifier
  verifyJwt: JwtVerifier
  authFailures: AuthFailureLimiter
}

/** What a request says of itself that authentication reads. */
export type Credentials = {
  authorization: string | undefined
  /** The client's address (the socket's remote address), which failures are counted against. */
  clientAddress: string | undefined
}

/**
 * Checks what the request proves beyond the key: a secret sent as HTTP Basic with an empty user name
 * (or the key as user name), or a JWT as `Authorization: Bearer`. Throws 401 for a wrong secret or
 * JWT. A key that requires its secret or a JWT answers a request that presents neither as an unknown
 * key does (401 `invalid project id`), and a wrong one as an unknown key answers it (an unknown key is
 * checked here as a key with no secret and no JWT keys): a stranger learns nothing of the key. Only a
 * request that proved the key's secret hears that its key requires a JWT too.
 * A request that presents a secret or JWT from a client with too many failures is refused with 429
 * before anything is verified (createAuthFailureLimiter.ts); a wrong one counts as a failure.
 */
export async function authenticate(
  entry: AuthenticatedKey,
  credentials: Credentials,
  deps: AuthenticateDeps,
): Promise<Authentication> {
  const { access } = entry
  const { authorization, clientAddress } = credentials
  const basic = parseBasicAuth(authorization)
  const bearer = basic === undefined && authorization?.toLowerCase().startsWith('bearer ') === true
  const presented = bearer || (basic !== undefined && basic.password !== '')
  if (presented) {
    const retryAfterMs = deps.authFailures.retryAfterMs(entry.apiKey.id, clientAddress)
    if (retryAfterMs > 0) throw new AuthRateLimitError(retryAfterMs)
  }
  let secretVerified = false
  let claims: JwtClaims | undefined
  try {
    if (basic) {
      if (basic.user !== '' && basic.user !== entry.apiKey.key) throw new InvalidSecretError()
      if (basic.password !== '') {
        // a key without a secret (an unknown key is one) takes as long to refuse it as a key with one
        const secretHash = access.secretHash ?? noSecretHash
        if (!(await deps.verifySecret(basic.password, entry.apiKey.key, secretHash))) {
          throw new InvalidSecretError()
        }
        secretVerified = true
      }
    } else if (bearer) {
      // a key without JWT keys (an unknown key is one) reads the token as one with: no kid matches
      claims = await deps.verifyJwt((authorization as string).slice(7).trim(), access.jwt, entry.apiKey.id)
    }
  } catch (err) {
    if (presented && (err instanceof InvalidSecretError || err instanceof InvalidJwtError)) {
      deps.authFailures.recordFailure(entry.apiKey.id, clientAddress)
    }
    throw err
  }
  if (access.requireSecret && !secretVerified) throw new InvalidKeyError({ logDetails: 'secret required' })
  if (access.jwt.required && claims === undefined) {
    // the key's own secret may hear what is missing; anyone else hears what an unknown key answers
    if (secretVerified) throw new InvalidJwtError({ logDetails: 'JWT required' })
    throw new InvalidKeyError({ logDetails: 'JWT required' })
  }
  return { secretVerified, claims }
}
