import { closingQuote } from './closingQuote.ts'

const quote = 0x22 // "
const openBracket = 0x5b // [
const closeBracket = 0x5d // ]
const openBrace = 0x7b // {
const closeBrace = 0x7d // }

/**
 * Whether JSON text opens more than `maxDepth` arrays and objects inside one another, read without
 * parsing it: one pass over the characters, counting `[` and `{` outside strings, strings skipped
 * with `indexOf` (an escaped quote does not end one). Text that is not JSON gets an answer too (a
 * stray closing bracket never hides what opens after it); the parser refuses it afterwards. Cheap enough to run on every body before `JSON.parse`, which would
 * accept nesting that serialising the value again overflows the stack on.
 */
export function isJsonDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0
  const length = text.length
  for (let index = 0; index < length; index++) {
    const char = text.charCodeAt(index)
    if (char === quote) {
      index = closingQuote(text, index)
      if (index === -1) return false
    } else if (char === openBracket || char === openBrace) {
      depth++
      if (depth > maxDepth) return true
    } else if ((char === closeBracket || char === closeBrace) && depth > 0) {
      depth--
    }
  }
  return false
}
