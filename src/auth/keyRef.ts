import { createHash } from 'node:crypto'

/** A short, stable, non-reversible name for a key, for logs: keys themselves are never logged. */
export function keyRef(key: string): string {
  return `k:${createHash('sha256').update(key).digest('hex').slice(0, 10)}`
}
