import { Buffer } from 'node:buffer'
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { KeyStore } from './keyStore.ts'

/*
 * How secrets are stored (docs/compatibility.md §4): `hmac-sha256$` and the base64url HMAC-SHA-256 of the
 * secret under the database's hash key.
 *
 * A secret is 16 random bytes made by tollgate, never a password someone chose: 128 bits that no
 * offline search gets through, however fast the hash. A slow password hash (scrypt, as before) buys
 * nothing against that and made every wrong secret cost ~100 ms of CPU, a denial of service for free.
 * A fast hash costs microseconds, so checking a secret costs less than reading the request.
 *
 * The hash key lives in the database (meta `secret_hash_key`, 32 random bytes made on first use), so
 * the CLI, the gateway and every instance sharing the database (Postgres later) agree on it with
 * nothing to configure or lose. It is no pepper: it sits beside the hashes and leaks with them. None
 * is needed, the secrets' 128 bits are the protection; the key only ties the hashes to this
 * deployment (the same secret hashes differently anywhere else). A key kept in config would add
 * little and would break every secret, silently, the day config and database part ways.
 */

const scheme = 'hmac-sha256$'
const hashKeyMeta = 'secret_hash_key'

/** A new random secret: 32 hex characters (128 bits), shown once and stored only as its hash. */
export function generateSecret(): string {
  return randomBytes(16).toString('hex')
}

/** The database's secret hash key, made (once, whichever process comes first) when absent. */
export async function getSecretHashKey(store: Pick<KeyStore, 'ensureMeta'>): Promise<Buffer> {
  const stored = await store.ensureMeta(hashKeyMeta, randomBytes(32).toString('base64'))
  return Buffer.from(stored, 'base64')
}

/** `hmac-sha256$<base64url>`: what a key's settings keep of its secret. */
export function hashSecret(secret: string, hashKey: Buffer): string {
  return `${scheme}${digest(secret, hashKey).toString('base64url')}`
}

/**
 * A hash that no secret has (an HMAC of 256 zero bits), as long as any other: what a secret sent to
 * a key without one is checked against, so that refusing it takes the time a key with a secret takes.
 */
export const noSecretHash = `${scheme}${Buffer.alloc(32).toString('base64url')}`

export function isSecretHash(stored: string): boolean {
  return stored.startsWith(scheme)
}

/** Whether `secret` is the one `stored` (an `hmac-sha256$` hash) was made from, compared in constant time. */
export function matchesSecretHash(secret: string, stored: string, hashKey: Buffer): boolean {
  if (!isSecretHash(stored)) return false
  const expected = Buffer.from(stored.slice(scheme.length), 'base64url')
  const actual = digest(secret, hashKey)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

function digest(secret: string, hashKey: Buffer): Buffer {
  return createHmac('sha256', hashKey).update(secret).digest()
}
