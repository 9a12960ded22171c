import type { NodeError } from '../jsonrpc/readNodeError.ts'

/**
 * What an eth_sendRawTransaction error says of a transaction the node may already have: `known`
 * (geth, erigon, reth `already known`; besu `Known transaction`; nethermind `AlreadyKnown`; erigon
 * `existing tx with same hash`; `already imported`), or `nonceTooLow` (geth, erigon, besu
 * `nonce too low`; nethermind `OldNonce`; openethereum `Transaction nonce is too low`), which may
 * mean that the transaction was mined, or that another one took its nonce.
 */
export function transactionErrorOf(error: NodeError): 'known' | 'nonceTooLow' | undefined {
  if (typeof error.message !== 'string') return undefined
  const { message } = error
  if (
    /already known|known transaction|alreadyknown|already imported|existing tx with same hash/i.test(message)
  )
    return 'known'
  if (/nonce too low|nonce is too low|oldnonce/i.test(message)) return 'nonceTooLow'
  return undefined
}
