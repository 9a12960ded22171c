import { Buffer } from 'node:buffer'
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/*
 * How signing secrets are kept: a webhook secret must be read back to sign each delivery, so it
 * cannot be stored as a hash the way key secrets and account tokens are. It is sealed with
 * AES-256-GCM under a key derived (HKDF-SHA-256) from the database's secret hash key (hashSecret.ts),
 * stored as `aes256gcm$<iv>.<tag>.<ciphertext>` (base64url). The key sits in the same database, so
 * this is no protection against someone holding all of it; it keeps the secret out of a dump or a
 * log of the alert tables alone, and ties it to this deployment.
 */

const scheme = 'aes256gcm$'
const info = 'tollgate alert signing secrets'

/** A new signing secret: `tgw_` and 64 hex characters (256 random bits), shown once. */
export function generateAlertSecret(): string {
  return `tgw_${randomBytes(32).toString('hex')}`
}

function sealingKey(hashKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', hashKey, Buffer.alloc(0), info, 32))
}

export function sealSecret(secret: string, hashKey: Buffer): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', sealingKey(hashKey), iv)
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  const parts = [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url'))
  return `${scheme}${parts.join('.')}`
}

/** The secret `sealed` holds; throws when it was sealed under another key or altered. */
export function openSecret(sealed: string, hashKey: Buffer): string {
  if (!sealed.startsWith(scheme)) throw new Error('not a sealed alert secret')
  const [iv, tag, data] = sealed
    .slice(scheme.length)
    .split('.')
    .map((part) => Buffer.from(part, 'base64url'))
  if (!iv || !tag || !data) throw new Error('not a sealed alert secret')
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(hashKey), iv)
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8')
}
