import { Buffer } from 'node:buffer'

/** What precedes a hex quantity result: `"result":"0x`. */
const resultText = '"result":"0x'
const result = Buffer.from(resultText)
const quote = 0x22
/** Where a node writes `"result"` (after `"jsonrpc"` and the id): looked for this far only. */
const searchBytes = 256
/** Hex digits that always fit a double exactly (2^52): more are read through a string. */
const exactDigits = 13

/**
 * The number an answer's result is when it is a hex quantity of 1 to 16 digits (`"result":"0x1a2b"`),
 * read from the answer's first bytes (or characters) without parsing it or copying it (this is
 * every `eth_blockNumber`, forwarded or a cache hit); undefined when the result is anything else, or
 * is not found there (an error, a long id: the caller parses those).
 */
export function readHexResult(answer: Buffer | string): bigint | undefined {
  const found = typeof answer === 'string' ? answer.indexOf(resultText) : indexOfResult(answer)
  if (found === -1 || found > searchBytes) return undefined
  const digitsStart = found + resultText.length
  let value = 0
  for (let at = digitsStart; at < answer.length; at++) {
    const code = typeof answer === 'string' ? answer.charCodeAt(at) : (answer[at] as number)
    if (code === quote) {
      const digits = at - digitsStart
      if (digits === 0 || digits > 16) return undefined
      if (digits <= exactDigits) return BigInt(value)
      return BigInt(
        `0x${typeof answer === 'string' ? answer.slice(digitsStart, at) : answer.toString('latin1', digitsStart, at)}`,
      )
    }
    const digit = hexDigit(code)
    if (digit === -1) return undefined
    value = value * 16 + digit
  }
  return undefined
}

/** Where `"result":"0x` starts in an answer's first bytes: a byte loop (no search, no copy); -1 if not there. */
function indexOfResult(bytes: Buffer): number {
  const end = Math.min(bytes.length, searchBytes + result.length) - result.length
  for (let index = 0; index <= end; index++) {
    if (bytes[index] === quote && startsWithResult(bytes, index)) return index
  }
  return -1
}

function startsWithResult(bytes: Buffer, at: number): boolean {
  for (let offset = 1; offset < result.length; offset++) {
    if (bytes[at + offset] !== result[offset]) return false
  }
  return true
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  if (code >= 0x61 && code <= 0x66) return code - 0x57
  if (code >= 0x41 && code <= 0x46) return code - 0x37
  return -1
}
