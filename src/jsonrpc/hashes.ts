/** Characters of a 32-byte hash (a block or transaction hash) as JSON-RPC writes it: `0x` and 64 hex digits. */
export const hashLength = 66

const anyHash = /0x[0-9a-f]{64}/gi

/** Every 32-byte hash in a text (the block hashes in a cache key), in either case, lowercased. */
export function hashesIn(text: string): string[] {
  return (text.match(anyHash) ?? []).map((hash) => hash.toLowerCase())
}
