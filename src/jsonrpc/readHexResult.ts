/** `"result":"0x` without its opening quote, as bytes. */
const resultName = [0x72, 0x65, 0x73, 0x75, 0x6c, 0x74, 0x22, 0x3a, 0x22, 0x30, 0x78]
const quote = 0x22
/** Where a node writes `"result"` (after `"jsonrpc"` and the id): looked for this far only. */
const searchBytes = 256
/** Hex digits that always fit a double exactly (2^52): more are read through a string. */
const exactDigits = 13

/**
 * The number an answer's result is when it is a hex quantity of 1 to 16 digits (`"result":"0x1a2b"`),
 * read from the answer's first bytes without parsing it or copying it into a string (this is every
 * `eth_blockNumber`); undefined when the result is anything else, or is not found there (an error, a
 * long id: the caller parses those).
 */
export function readHexResult(answer: Buffer | string): bigint | undefined {
  const bytes = typeof answer === 'string' ? Buffer.from(answer.slice(0, searchBytes + 32)) : answer
  const end = Math.min(bytes.length, searchBytes) - resultName.length
  for (let index = 0; index < end; index++) {
    if (bytes[index] !== quote || !startsWithResult(bytes, index + 1)) continue
    const digitsStart = index + 1 + resultName.length
    let value = 0
    let digits = 0
    for (let at = digitsStart; at < bytes.length; at++) {
      const byte = bytes[at] as number
      if (byte === quote) {
        if (digits === 0 || digits > 16) return undefined
        return digits <= exactDigits
          ? BigInt(value)
          : BigInt(`0x${bytes.toString('latin1', digitsStart, at)}`)
      }
      const digit = hexDigit(byte)
      if (digit === -1) return undefined
      value = value * 16 + digit
      digits++
    }
    return undefined
  }
  return undefined
}

function startsWithResult(bytes: Buffer, at: number): boolean {
  for (let offset = 0; offset < resultName.length; offset++) {
    if (bytes[at + offset] !== resultName[offset]) return false
  }
  return true
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37
  return -1
}
