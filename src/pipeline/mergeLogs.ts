import { Buffer } from 'node:buffer'
import { MalformedUpstreamAnswerError } from '../errors/upstreamErrors.ts'
import type { RpcId } from '../jsonrpc/types.ts'

/** The logs of a result (`[…]`) as the text between its brackets: none for `[]`, an error for anything else. */
export function logsPartsOf(result: string | Buffer): { parts: Buffer[] } | MalformedUpstreamAnswerError {
  const text = typeof result === 'string' ? Buffer.from(result) : result
  let start = 0
  let end = text.length
  while (start < end && isBlank(text[start] as number)) start++
  while (end > start && isBlank(text[end - 1] as number)) end--
  if (text[start] !== 0x5b || text[end - 1] !== 0x5d) {
    return new MalformedUpstreamAnswerError({ logDetails: 'an eth_getLogs result that is not a list' })
  }
  start++
  end--
  while (start < end && isBlank(text[start] as number)) start++
  return { parts: start < end ? [text.subarray(start, end)] : [] }
}

const logIndexKey = Buffer.from('"logIndex"')

/** How many logs a chunk's parts hold: each log has one `logIndex`. */
export function countLogs(parts: Buffer[]): number {
  let count = 0
  for (const part of parts) {
    for (let at = part.indexOf(logIndexKey); at !== -1; at = part.indexOf(logIndexKey, at + 1)) count++
  }
  return count
}

/** One answer for `id` whose result is the logs of `parts` (logsPartsOf of each chunk), in their order. */
export function mergeLogs(id: RpcId, parts: Buffer[]): Buffer {
  const pieces: Buffer[] = [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":[`)]
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) pieces.push(comma)
    pieces.push(parts[index] as Buffer)
  }
  pieces.push(closing)
  return Buffer.concat(pieces)
}

const comma = Buffer.from(',')
const closing = Buffer.from(']}')

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}
