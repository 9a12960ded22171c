const quote = 0x22 // "
const backslash = 0x5c // \
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

/** Escaped quotes in one string after which it is read character by character instead. */
const escapedQuotesBeforeCharScan = 8

/**
 * The index of the quote that ends the string opened at `open`, or -1 when it never ends. Long runs
 * without escaped quotes (hex data) are skipped by `indexOf`; a string full of them (`\"\"\"...`,
 * one `indexOf` call per two characters) is finished character by character, 5x faster there.
 */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1)
  for (let escaped = 0; end !== -1 && isEscaped(text, end); escaped++) {
    if (escaped === escapedQuotesBeforeCharScan) return closingQuoteByChar(text, end + 1)
    end = text.indexOf('"', end + 1)
  }
  return end
}

/** The same from `from`, inside a string and not inside an escape, one character at a time. */
function closingQuoteByChar(text: string, from: number): number {
  const length = text.length
  for (let index = from; index < length; index++) {
    const char = text.charCodeAt(index)
    if (char === backslash) index++
    else if (char === quote) return index
  }
  return -1
}

/** An odd run of backslashes right before `at` escapes it. Each run is counted once: linear overall. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0
  for (let index = at - 1; index >= 0 && text.charCodeAt(index) === backslash; index--) backslashes++
  return backslashes % 2 === 1
}
