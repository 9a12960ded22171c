import type { MethodSpec } from '../methods/methodTable.ts'
import { blockRef, receiptsBlockRef } from '../methods/params.ts'

/**
 * The params of a call pinned to a block number, asking for that block by its hash instead (an
 * EIP-1898 `{ blockHash }` block reference; eth_getBlockReceipts takes the hash itself): the node
 * then answers for exactly the block the cache keeps the answer under, or fails when it does not
 * have that block (a node still on a branch the chain left), and the call moves on to another.
 * Undefined for a method whose block argument takes no hash (eth_getBlockByNumber and the other
 * by-number methods): their answers are checked for the block instead.
 */
export function byBlockHash(spec: MethodSpec, params: unknown[], hash: string): unknown[] | undefined {
  const index = blockHashParam(spec)
  if (index === undefined) return undefined
  const asked = [...params]
  asked[index] = spec.params[index]?.parse === blockRef ? { blockHash: hash } : hash
  return asked
}

/** The index of the method's block argument that takes a block hash, if it has one (byBlockHash). */
export function blockHashParam(spec: MethodSpec): number | undefined {
  const index = spec.params.findIndex(({ parse }) => parse === blockRef || parse === receiptsBlockRef)
  return index === -1 ? undefined : index
}
