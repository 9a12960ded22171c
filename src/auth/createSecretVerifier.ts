import { createHash, timingSafeEqual } from 'node:crypto'
import { verifySecret } from './hashSecret.ts'

export type SecretVerifier = (secret: string, secretHash: string) => Promise<boolean>

const maxRemembered = 10_000

/**
 * Checks secrets against their slow hashes, remembering a SHA-256 of each secret that passed so
 * that a key's later requests cost a hash and a constant-time compare, not an scrypt.
 */
export function createSecretVerifier(): SecretVerifier {
  const verified = new Map<string, Buffer>()
  return async (secret, secretHash) => {
    const digest = createHash('sha256').update(secret).digest()
    const known = verified.get(secretHash)
    if (known && timingSafeEqual(known, digest)) return true
    const ok = await verifySecret(secret, secretHash)
    if (ok) {
      if (verified.size >= maxRemembered) verified.clear()
      verified.set(secretHash, digest)
    }
    return ok
  }
}
