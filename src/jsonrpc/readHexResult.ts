import type { Buffer } from 'node:buffer'
import { answerMember, answerMemberOfText } from './answerMember.ts'

/** What opens a hex quantity: `"0x`. */
const quote = 0x22
const zero = 0x30
const x = 0x78
/** Hex digits that always fit a double exactly (2^52): more are read through a string. */
const exactDigits = 13

/**
 * The number an answer's result is when it is a hex quantity of 1 to 16 digits (`"result":"0x1a2b"`),
 * read from the answer's first bytes (or characters) without parsing it or copying it (this is
 * every `eth_blockNumber`, forwarded or a cache hit); undefined when the result is anything else, or
 * its member is not among the first bytes (an error, a long id: the caller parses those).
 */
export function readHexResult(answer: Buffer | string): bigint | undefined {
  if (typeof answer === 'string') {
    const member = answerMemberOfText(answer)
    if (member <= 0 || !answer.startsWith('"0x', member)) return undefined
    const end = answer.indexOf('"', member + 3)
    return end === -1 ? undefined : hexQuantity(answer.slice(member + 3, end))
  }
  const member = answerMember(answer)
  if (member <= 0 || answer[member] !== quote || answer[member + 1] !== zero || answer[member + 2] !== x)
    return undefined
  const digitsStart = member + 3
  let value = 0
  for (let at = digitsStart; at < answer.length; at++) {
    const code = answer[at] as number
    if (code === quote) {
      const digits = at - digitsStart
      if (digits === 0 || digits > 16) return undefined
      return digits <= exactDigits ? BigInt(value) : BigInt(`0x${answer.toString('latin1', digitsStart, at)}`)
    }
    const digit = hexDigit(code)
    if (digit === -1) return undefined
    value = value * 16 + digit
  }
  return undefined
}

/** The digits of a cached answer's hex quantity (1 to 16 of them), as a number; undefined when they are not one. */
function hexQuantity(digits: string): bigint | undefined {
  return /^[0-9a-f]{1,16}$/i.test(digits) ? BigInt(`0x${digits}`) : undefined
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  if (code >= 0x61 && code <= 0x66) return code - 0x57
  if (code >= 0x41 && code <= 0x46) return code - 0x37
  return -1
}
