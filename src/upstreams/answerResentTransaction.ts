import { Buffer } from 'node:buffer'
import { keccak_256 } from '@noble/hashes/sha3'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils'
import { ReceiptNotReadyError } from '../errors/upstreamErrors.ts'
import { readNodeError } from '../jsonrpc/readNodeError.ts'
import type { RawTransaction } from './SendOptions.ts'
import { transactionErrorOf } from './transactionErrorOf.ts'

/**
 * The answer to an eth_sendRawTransaction that tollgate sent again after an attempt a node may have
 * seen (docs/compatibility.md §7). `already known` (in any client's spelling) means the node has
 * this very transaction: the client gets its hash. `nonce too low` may mean that it was mined, or
 * that another transaction took its nonce: the node is asked for the transaction by hash
 * (`lookUp`), and only if it has it does the client get the hash. Any other answer passes through.
 * An eth_sendRawTransactionSync (`receiptWaitMs` set) answers a receipt instead (receiptAnswer).
 */
export async function answerResentTransaction(
  answer: Buffer,
  transaction: RawTransaction,
  lookUp: (body: string) => Promise<Buffer | undefined>,
): Promise<Buffer> {
  const error = readNodeError(answer)
  const meaning = error && transactionErrorOf(error)
  if (!meaning) return answer
  const hash = `0x${bytesToHex(keccak_256(hexToBytes(transaction.bytes.slice(2))))}`
  const { id } = JSON.parse(answer.toString()) as { id?: unknown }
  if (transaction.receiptWaitMs !== undefined) return receiptAnswer(answer, meaning, hash, id, lookUp)
  if (meaning === 'nonceTooLow') {
    const found = await lookUp(lookUpBody('eth_getTransactionByHash', hash))
    if (!found || !isTransaction(found, hash)) return answer
  }
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, result: hash }))
}

/**
 * A resent eth_sendRawTransactionSync whose node already has the transaction (`already known`, or
 * `nonce too low` for one it mined) does not wait for it: its receipt is asked for. Found, it is the
 * answer, as the first send would have given it; none yet for a transaction in the node's pool
 * answers EIP-7966's timeout (ReceiptNotReadyError, code 4 with the hash, which clients read as "poll
 * for the receipt"); none for `nonce too low` (another transaction took the nonce): the node's error.
 */
async function receiptAnswer(
  answer: Buffer,
  meaning: 'known' | 'nonceTooLow',
  hash: string,
  id: unknown,
  lookUp: (body: string) => Promise<Buffer | undefined>,
): Promise<Buffer> {
  const found = await lookUp(lookUpBody('eth_getTransactionReceipt', hash))
  const receipt = found && receiptOf(found, hash)
  if (receipt) return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, result: receipt }))
  if (meaning === 'known') throw new ReceiptNotReadyError(hash)
  return answer
}

function lookUpBody(method: string, hash: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [hash] })
}

function isTransaction(body: Buffer, hash: string): boolean {
  return resultOf(body, 'hash', hash) !== undefined
}

/** The receipt of the transaction `hash` in a node's eth_getTransactionReceipt answer, or undefined. */
function receiptOf(body: Buffer, hash: string): object | undefined {
  return resultOf(body, 'transactionHash', hash)
}

/** An answer's result when it is an object whose `field` is `hash`, else undefined. */
function resultOf(body: Buffer, field: string, hash: string): object | undefined {
  try {
    const { result } = JSON.parse(body.toString()) as { result?: Record<string, unknown> | null }
    const value = result?.[field]
    return typeof value === 'string' && value.toLowerCase() === hash ? (result as object) : undefined
  } catch {
    return undefined
  }
}
