import type { BlockSummary } from '../upstreams/fetchBlock.ts'
import type { Header } from './createHeadChain.ts'

/**
 * A fetched block (eth_getBlockBy*, transaction hashes only) shaped like the node's own newHeads objects:
 * the fields they carry, in their order (geth's carry no `transactions`, `uncles` or `size`; anvil's
 * carry every field of the block). With no upstream subscription to learn from (polling, or before
 * the first notification) the block goes out as the node returned it.
 */
export function toHeader(block: Header, fields: readonly string[] | undefined): Header {
  if (!fields) return block
  const header: Record<string, unknown> = {}
  for (const field of fields) if (field in block) header[field] = block[field]
  return header as Header
}

/** A block the chain of heads can take: it names its hash (and, as every node's do, its parent's). */
export function isHeader(block: BlockSummary): block is Header {
  return typeof block.hash === 'string'
}
