import { closingQuote } from './closingQuote.ts'

/** What a call's text says of itself that parsing it hides (readCallText). */
export type CallText = {
  /** Object members written, at every depth (one `:` each). */
  members: number
  /** The top-level `id` exactly as written, blanks around it left out. */
  idText: string
}

const quote = 0x22 // "
const backslash = 0x5c // \
const openBracket = 0x5b // [
const closeBracket = 0x5d // ]
const openBrace = 0x7b // {
const closeBrace = 0x7d // }
const colon = 0x3a // :
const comma = 0x2c // ,
const minus = 0x2d // -
const dot = 0x2e // .
const plus = 0x2b // +
const zero = 0x30
const nine = 0x39
const lowerE = 0x65
const upperE = 0x45

/** The four members of a call, each a bit: each must be written exactly once, and nothing else. */
const jsonrpcBit = 1
const idBit = 2
const methodBit = 4
const paramsBit = 8
const allMembers = 15
/** Longest run of digits written back unchanged by JSON.stringify after JSON.parse (safe integers). */
const maxPlainDigits = 15

/**
 * Reads one call's JSON text in one pass without parsing it, for what parsing hides: whether it may
 * be forwarded as written and be read by any node as tollgate read it. Undefined when it may not:
 * not an object whose members are exactly `jsonrpc`, `id`, `method` and `params`, each once and
 * spelled without escapes (a node may take the first of two `method`s where JSON.parse takes the
 * last, or match names ignoring case); or a number that is not a plain integer of at most 15 digits
 * (serialising the parsed value writes `1.0` or `1e3` differently, and some nodes refuse those).
 * Its depth is the caller's to bound before (isJsonDeeperThan). Nested duplicates
 * are the caller's to find: `members` counts every member written, which JSON.parse keeps fewer of
 * when one object names a member twice. The text is one JSON.parse accepted; undefined says only
 * that it is not to be forwarded as written.
 */
export function readCallText(text: string): CallText | undefined {
  let depth = 0
  let members = 0
  let seen = 0
  // at depth 1, the next string is a member's name
  let expectingName = false
  // the member whose value is being read at depth 1
  let member = 0
  let idStart = -1
  let idText: string | undefined
  let digits = 0
  const length = text.length
  for (let index = 0; index < length; index++) {
    const char = text.charCodeAt(index)
    if (char >= zero && char <= nine) {
      if (++digits > maxPlainDigits) return undefined
      continue
    }
    const afterDigit = digits > 0
    digits = 0
    if (char === quote) {
      const end = closingQuote(text, index)
      if (end === -1) return undefined
      if (depth === 1 && expectingName) {
        member = memberBit(text, index + 1, end)
        if (member === 0 || (seen & member) !== 0) return undefined
        seen |= member
        expectingName = false
      }
      index = end
    } else if (char === openBrace || char === openBracket) {
      if (depth === 0 && char !== openBrace) return undefined
      if (++depth === 1) expectingName = true
    } else if (char === closeBrace || char === closeBracket) {
      if (depth === 1 && idStart !== -1 && idText === undefined) idText = text.slice(idStart, index).trim()
      // a closing bracket with nothing open: not one call's text (and the depth would go wrong)
      if (--depth < 0) return undefined
    } else if (char === colon) {
      members++
      if (depth === 1 && member === idBit) idStart = index + 1
    } else if (char === comma) {
      if (depth === 1) {
        if (idStart !== -1 && idText === undefined) idText = text.slice(idStart, index).trim()
        expectingName = true
        member = 0
      }
    } else if (char === dot || char === plus || char === upperE || (char === lowerE && afterDigit)) {
      // outside strings these are only ever in numbers: a fraction or an exponent
      return undefined
    } else if (char === minus && text.charCodeAt(index + 1) === zero) {
      // -0, or -0.5 (refused above for its dot anyway): JSON.stringify writes -0 as 0
      return undefined
    } else if (char === backslash) {
      return undefined
    }
  }
  if (seen !== allMembers || idText === undefined) return undefined
  return { members, idText }
}

/**
 * Which of the four members the name written between `start` and `end` is; 0 for any other
 * (compared in place: no string made per name; an escaped name never matches).
 */
function memberBit(text: string, start: number, end: number): number {
  switch (end - start) {
    case 2:
      return text.startsWith('id', start) ? idBit : 0
    case 6:
      return text.startsWith('method', start) ? methodBit : text.startsWith('params', start) ? paramsBit : 0
    case 7:
      return text.startsWith('jsonrpc', start) ? jsonrpcBit : 0
    default:
      return 0
  }
}
