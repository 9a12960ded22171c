import { InvalidJwtError, InvalidSecretError, ProjectSettingsError } from '../errors/errors.ts'
import type { JwtClaims, JwtVerifier } from './createJwtVerifier.ts'
import type { KeyEntry } from './createKeyRegistry.ts'
import type { SecretVerifier } from './createSecretVerifier.ts'
import { parseBasicAuth } from './parseBasicAuth.ts'

export type Authentication = {
  /** The request carried the key's right secret: the allowlists do not apply. */
  secretVerified: boolean
  /** Claims of a verified JWT, which narrow the allowlists. */
  claims: JwtClaims | undefined
}

export type AuthenticateDeps = { verifySecret: SecretVerifier; verifyJwt: JwtVerifier }

/**
 * Checks what the request proves beyond the key: a secret sent as HTTP Basic with an empty user name
 * (or the key as user name), or a JWT as `Authorization: Bearer`. Throws 401 for a wrong secret or
 * JWT, 403 when the key requires a secret that is missing, 401 when it requires a JWT that is missing.
 */
export async function authenticate(
  entry: KeyEntry,
  authorization: string | undefined,
  deps: AuthenticateDeps,
): Promise<Authentication> {
  const { access } = entry
  let secretVerified = false
  let claims: JwtClaims | undefined
  const basic = parseBasicAuth(authorization)
  if (basic) {
    if (basic.user !== '' && basic.user !== entry.apiKey.key) throw new InvalidSecretError()
    if (basic.password !== '') {
      if (access.secretHash === undefined || !(await deps.verifySecret(basic.password, access.secretHash))) {
        throw new InvalidSecretError()
      }
      secretVerified = true
    }
  } else if (authorization?.toLowerCase().startsWith('bearer ')) {
    if (access.jwt.keys.size === 0)
      throw new InvalidJwtError({ logDetails: 'the key has no JWT public keys' })
    claims = await deps.verifyJwt(authorization.slice(7).trim(), access.jwt, entry.apiKey.id)
  }
  if (access.requireSecret && !secretVerified)
    throw new ProjectSettingsError({ logDetails: 'secret required' })
  if (access.jwt.required && claims === undefined) throw new InvalidJwtError({ logDetails: 'JWT required' })
  return { secretVerified, claims }
}
