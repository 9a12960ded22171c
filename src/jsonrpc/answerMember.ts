import type { Buffer } from 'node:buffer'

/** Where nodes write the member that says result or error: after `"jsonrpc"` and `"id"`. */
const answerHeadBytes = 128

/**
 * Where `"result":` or `"error":`, whichever comes first, ends among an answer's first
 * answerHeadBytes bytes: the index just past its colon, negated for `"error":`; 0 when neither ends
 * there. Each byte is looked at once, and the name read only at a colon (a name ends `":`; within a string a
 * quote is escaped, so a string's text never reads as a name). No search, no copy: this is every
 * answer's first look (the judge's, the request log's, eth_blockNumber's shown head).
 */
export function answerMember(body: Buffer): number {
  const end = Math.min(body.length, answerHeadBytes)
  // two bytes a step, from where the shortest name (`"error"`) can end: of a name's closing `":`,
  // one byte is at an even index
  for (let at = errorText.length - 1; at < end; at += 2) {
    const byte = body[at]
    const colon = byte === colonByte ? at : byte === quote && body[at + 1] === colonByte ? at + 1 : -1
    // (a colon at `end` would be past the head, were its length odd)
    if (colon === -1 || colon >= end || body[colon - 1] !== quote) continue
    // the name before it, byte by byte (a loop over the name costs twice this, on every answer)
    const last = body[colon - 2]
    if (
      last === letterT &&
      body[colon - 3] === letterL &&
      body[colon - 4] === letterU &&
      body[colon - 5] === letterS &&
      body[colon - 6] === letterE &&
      body[colon - 7] === letterR &&
      body[colon - 8] === quote
    )
      return colon + 1
    if (
      last === letterR &&
      body[colon - 3] === letterO &&
      body[colon - 4] === letterR &&
      body[colon - 5] === letterR &&
      body[colon - 6] === letterE &&
      body[colon - 7] === quote
    )
      return -(colon + 1)
  }
  return 0
}

/** answerMember of an answer's text: the same characters, at the same places, for text that is ASCII there. */
export function answerMemberOfText(text: string): number {
  const end = Math.min(text.length, answerHeadBytes)
  for (let colon = errorText.length - 1; colon < end; colon++) {
    if (text.charCodeAt(colon) !== colonByte || text.charCodeAt(colon - 1) !== quote) continue
    if (colon >= resultText.length && text.startsWith(resultText, colon - resultText.length)) return colon + 1
    if (text.startsWith(errorText, colon - errorText.length)) return -(colon + 1)
  }
  return 0
}

/** `"result"` and `"error"`: a member's name, quotes and all. */
const resultText = '"result"'
const errorText = '"error"'
const quote = 0x22
const colonByte = 0x3a
const letterE = 0x65
const letterL = 0x6c
const letterO = 0x6f
const letterR = 0x72
const letterS = 0x73
const letterT = 0x74
const letterU = 0x75
