import { keccak_256 } from '@noble/hashes/sha3'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import { readNodeError, transactionErrorOf } from './nodeErrors.ts'

/**
 * The answer to an eth_sendRawTransaction that tollgate sent again after an attempt a node may have
 * seen (docs/compatibility.md §7). `already known` (in any client's spelling) means the node has
 * this very transaction: the client gets its hash. `nonce too low` may mean that it was mined, or
 * that another transaction took its nonce: the node is asked for the transaction by hash
 * (`lookUp`), and only if it has it does the client get the hash. Any other answer passes through.
 */
export async function answerResentTransaction(
  answer: Buffer,
  rawTransaction: string,
  lookUp: (body: string) => Promise<Buffer | undefined>,
): Promise<Buffer> {
  const error = readNodeError(answer)
  const meaning = error && transactionErrorOf(error)
  if (!meaning) return answer
  const hash = `0x${bytesToHex(keccak_256(hexToBytes(rawTransaction.slice(2))))}`
  if (meaning === 'nonceTooLow') {
    const found = await lookUp(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionByHash', params: [hash] }),
    )
    if (!found || !isTransaction(found, hash)) return answer
  }
  const { id } = JSON.parse(answer.toString()) as { id?: unknown }
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, result: hash }))
}

function isTransaction(body: Buffer, hash: string): boolean {
  try {
    const { result } = JSON.parse(body.toString()) as { result?: { hash?: unknown } | null }
    return typeof result?.hash === 'string' && result.hash.toLowerCase() === hash
  } catch {
    return false
  }
}
