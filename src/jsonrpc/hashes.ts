/** Characters of a 32-byte hash (a block or transaction hash) as JSON-RPC writes it: `0x` and 64 hex digits. */
export const hashLength = 66

/** Every 32-byte hash in a text (the block hashes in a cache key), in either case: for `String.match`, which starts it over each time. */
export const hashPattern = /0x[0-9a-f]{64}/gi
