import { Buffer } from 'node:buffer'
import { scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>

const prefix = 'scrypt$'
const maxmem = 64 * 1024 * 1024

/** A hash from before secrets were HMACs: `scrypt$N$r$p$salt$hash` (base64). */
export function isScryptHash(stored: string): boolean {
  return stored.startsWith(prefix)
}

/**
 * Checks a secret against a legacy scrypt hash, in constant time. Slow (~100 ms of CPU) by design of
 * scrypt: only ever run until the key's first success rewrites its hash (createSecretVerifier.ts).
 */
export async function verifyScryptSecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  if (expected.length === 0) return false
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem,
  })
  return timingSafeEqual(actual, expected)
}
