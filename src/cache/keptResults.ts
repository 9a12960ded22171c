import { Buffer } from 'node:buffer'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import type { CachedValue } from './createMemoryCache.ts'

/** Results up to this size are kept as strings. */
const stringBytes = 4096

/** A result read back from the shared cache, kept as the memory keeps results. */
export function keptValueOf(bytes: Buffer): CachedValue {
  return bytes.length <= stringBytes ? bytes.toString() : detached(bytes)
}

const answerPrefix = Buffer.from('{"jsonrpc":"2.0","id":1,"result":')
const numberField = /"(?:number|blockNumber)":\s*"(0x[0-9a-fA-F]{1,16})"/
const blockNumberField = /"blockNumber":\s*"(0x[0-9a-fA-F]{1,16})"/
const blockHashField = /"blockHash":\s*"(0x[0-9a-fA-F]{64})"/
/** How far into a mined transaction's result its block is looked for (a receipt's logs name it too). */
const minedFieldBytes = 65_536

/**
 * Whether a result names the block `hash` (lowercase): a block's own hash, its transactions' or a
 * log's `blockHash`. A result of that block at another branch's node names that branch's block.
 */
export function namesBlock(result: CachedValue, hash: string): boolean {
  // nodes write hashes in lower case
  return typeof result === 'string' ? result.includes(hash) : result.includes(hash, 0, 'latin1')
}

/**
 * The block a mined transaction's result (a transaction or a receipt) names, hash lowercased;
 * undefined when it names none (null, a pending transaction).
 */
export function minedIn(result: CachedValue): { hash: string; number: bigint } | undefined {
  const text =
    typeof result === 'string'
      ? result
      : result.toString('latin1', 0, Math.min(result.length, minedFieldBytes))
  const hash = blockHashField.exec(text)
  const number = blockNumberField.exec(text)
  if (!hash || !number) return undefined
  return { hash: (hash[1] as string).toLowerCase(), number: BigInt(number[1] as string) }
}

/**
 * The block number a result names (a block's `number`, a receipt's or log's `blockNumber`), read from
 * its first bytes (a block's number comes before its transactions); undefined when it names none.
 */
export function blockNumberIn(result: CachedValue): bigint | undefined {
  const text =
    typeof result === 'string' ? result : result.toString('latin1', 0, Math.min(result.length, 4096))
  const found = numberField.exec(text)
  return found ? BigInt(found[1] as string) : undefined
}
/** The result's JSON text without parsing it when the node wrote the usual member order; else parsed. */
export function splitAnswer(answer: Buffer): { result: CachedValue } | { answer: Buffer } {
  let end = answer.length
  while (end > 0 && isBlank(answer[end - 1] as number)) end--
  if (answer.subarray(0, answerPrefix.length).equals(answerPrefix) && answer[end - 1] === 0x7d) {
    let start = answerPrefix.length
    let resultEnd = end - 1
    // blanks around the result ("result": null) would hide a null from the caller's check
    while (start < resultEnd && isBlank(answer[start] as number)) start++
    while (resultEnd > start && isBlank(answer[resultEnd - 1] as number)) resultEnd--
    const result = answer.subarray(start, resultEnd)
    return { result: result.length <= stringBytes ? result.toString() : detached(result) }
  }
  const parsed = JSON.parse(answer.toString()) as { result?: unknown }
  if (!('result' in parsed) || 'error' in parsed) return { answer }
  const text = JSON.stringify(parsed.result)
  return { result: text.length <= stringBytes ? text : Buffer.from(text) }
}

/** Bytes of a view that keeping it would hold on to, beyond its own: up to this, the view is kept. */
const pinnedSlackBytes = 1024

/**
 * A large result to keep: the view itself when the memory under it is the answer's own (a collected
 * answer of several chunks), a copy when it is a small part of something larger (one chunk of a
 * socket read, which would hold the whole read buffer). No copy that keeping it does not need.
 */
function detached(result: Buffer): Buffer {
  return result.buffer.byteLength - result.length <= pinnedSlackBytes ? result : Buffer.from(result)
}

/** A whole answer for `id` around a kept result. */
export function resultAnswer(id: RpcId, value: CachedValue): RpcPayload {
  const prefix = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`
  if (typeof value === 'string') return `${prefix}${value}}`
  // the kept bytes are written as they are, between the id's prefix and the closing brace
  return new AnswerParts([Buffer.from(prefix), value, closingBrace])
}

const closingBrace = Buffer.from('}')

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}
