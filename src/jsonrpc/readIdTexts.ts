import { closingQuote } from './closingQuote.ts'

const quote = 0x22 // "
const openBracket = 0x5b // [
const closeBracket = 0x5d // ]
const openBrace = 0x7b // {
const closeBrace = 0x7d // }
const colon = 0x3a // :
const comma = 0x2c // ,

/** Characters a JSON number is written with. */
const numberText = /[-+.eE0-9]/

/**
 * The text of each call's `id` member as written, when it is a number: by element for a batch (0 for
 * a single call), the last `id` of an object winning as in JSON.parse. For the rare id whose text
 * JSON.parse and JSON.stringify do not give back (past 2^53, a fraction written `1.50`, `-0`): read
 * only then, on text JSON.parse accepted.
 */
export function readIdTexts(text: string): Map<number, string> {
  const ids = new Map<number, string>()
  const start = text.search(/\S/)
  const callDepth = text.charCodeAt(start) === openBracket ? 2 : 1
  let depth = 0
  let element = 0
  let expectingName = false
  let readingId = false
  // the container at the calls' depth is an object (a batch may hold arrays, which are no calls)
  let inCall = false
  for (let index = start; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (char === quote) {
      const end = closingQuote(text, index)
      if (inCall && depth === callDepth && expectingName) {
        const raw = text.slice(index + 1, end)
        const name = raw.includes('\\') ? (JSON.parse(text.slice(index, end + 1)) as string) : raw
        readingId = name === 'id'
        expectingName = false
      }
      index = end
    } else if (char === openBrace || char === openBracket) {
      depth++
      if (depth === callDepth) {
        inCall = char === openBrace
        expectingName = inCall
      }
    } else if (char === closeBrace || char === closeBracket) {
      depth--
    } else if (char === comma) {
      if (depth === callDepth) expectingName = inCall
      else if (depth === 1 && callDepth === 2) element++
    } else if (char === colon && inCall && depth === callDepth && readingId) {
      readingId = false
      let from = index + 1
      while (/\s/.test(text[from] ?? '')) from++
      let to = from
      while (numberText.test(text[to] ?? '')) to++
      if (to > from) ids.set(element, text.slice(from, to))
      else ids.delete(element)
    }
  }
  return ids
}
