import type { Buffer } from 'node:buffer'
import { hashSecret, isSecretHash, matchesSecretHash } from './hashSecret.ts'
import type { KeyStore } from './keyStore.ts'
import { isScryptHash, verifyScryptSecret } from './verifyScryptSecret.ts'

/** Whether `secret` is the secret of `key`, whose settings hold `secretHash`. */
export type SecretVerifier = (secret: string, key: string, secretHash: string) => Promise<boolean>

export type SecretVerifierOptions = {
  /** The database's hash key (getSecretHashKey). */
  hashKey: Buffer
  store: Pick<KeyStore, 'replaceSecretHash'>
  onError?: (err: unknown) => void
}

const maxRemembered = 10_000

/**
 * Checks secrets against their stored hashes: an `hmac-sha256$` hash in microseconds. A legacy
 * `scrypt$` hash is checked the slow way once: the key's first right secret writes its HMAC to the
 * store in place of the scrypt hash (unless the secret was rotated meanwhile), and is remembered so
 * that the key's requests until the registry reloads it do not pay scrypt again either.
 */
export function createSecretVerifier(options: SecretVerifierOptions): SecretVerifier {
  const { hashKey, store, onError } = options
  /** legacy scrypt hash → the HMAC of the secret that matched it */
  const upgraded = new Map<string, string>()

  return async (secret, key, secretHash) => {
    if (isSecretHash(secretHash)) return matchesSecretHash(secret, secretHash, hashKey)
    if (!isScryptHash(secretHash)) return false
    const known = upgraded.get(secretHash)
    if (known !== undefined) return matchesSecretHash(secret, known, hashKey)
    if (!(await verifyScryptSecret(secret, secretHash))) return false
    const next = hashSecret(secret, hashKey)
    if (upgraded.size >= maxRemembered) upgraded.clear()
    upgraded.set(secretHash, next)
    try {
      await store.replaceSecretHash(key, secretHash, next)
    } catch (err) {
      // the secret is right all the same; the next success tries the write again
      upgraded.delete(secretHash)
      onError?.(err)
    }
    return true
  }
}
