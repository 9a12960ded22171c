import { closingQuote } from './closingQuote.ts'

const quote = 0x22 // "
const openBracket = 0x5b // [
const closeBracket = 0x5d // ]
const openBrace = 0x7b // {
const closeBrace = 0x7d // }

/**
 * Whether JSON text opens more than `maxDepth` arrays and objects inside one another, read without
 * parsing it. Text that opens no more than that in all (nearly every call) is answered from a count
 * of `[` and `{` by `indexOf`; other text in one pass over the characters, counting them outside
 * strings, strings skipped with `indexOf` (an escaped quote does not end one). Text that is not JSON
 * gets an answer too (a stray closing bracket never hides what opens after it); the parser refuses
 * it afterwards. Cheap enough to run on every body before `JSON.parse`, which would accept nesting
 * that serialising the value again overflows the stack on.
 */
export function isJsonDeeperThan(text: string, maxDepth: number): boolean {
  // nothing nests deeper than it opens: most bodies open a few, found without reading the rest
  if (!opensMoreThan(text, maxDepth)) return false
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

/** Whether `text` holds more than `count` of `[` and `{` together, strings included. */
function opensMoreThan(text: string, count: number): boolean {
  let opens = 0
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++opens > count) return true
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++opens > count) return true
  return false
}
