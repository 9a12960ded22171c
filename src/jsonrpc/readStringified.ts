const quote = 0x22 // "
const comma = 0x2c // ,
const minus = 0x2d // -
const colon = 0x3a // :
const zero = 0x30
const nine = 0x39
const openBracket = 0x5b // [
const closeBracket = 0x5d // ]
const openBrace = 0x7b // {
const closeBrace = 0x7d // }

/** What JSON.stringify escapes or writes otherwise: control characters, backslashes, surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const writtenOtherwise = /[\u0000-\u001f\\\ud800-\udfff]/

/** Integers of up to 15 digits read back exactly, and JSON.stringify writes them digit for digit. */
const maxIntegerDigits = 15

/**
 * Reads JSON text written the way JSON.stringify writes it, in one pass: no whitespace, strings
 * without escapes, integers (no fraction, exponent or `-0`) of up to 15 digits, no member named
 * twice, no member named like an array index or `__proto__`, and at most `maxDepth` arrays and
 * objects inside one another. Its value is then the one JSON.parse gives, and serialising that value
 * writes the text back, so a node reads the text as tollgate did. Any other text, well-formed or
 * not, gives undefined: JSON.parse reads it instead (JSON text never reads as undefined).
 * Most clients (viem, ethers, web3.js, cast) write calls this way.
 */
export function readStringified(text: string, maxDepth: number): unknown {
  if (writtenOtherwise.test(text)) return undefined
  const length = text.length
  // the arrays and objects being filled, each with the member name its next value goes under
  const open: (unknown[] | Record<string, unknown>)[] = []
  const names: string[] = []
  let pos = 0
  let container: unknown[] | Record<string, unknown> | undefined
  let name = ''
  for (;;) {
    let value: unknown
    const char = text.charCodeAt(pos)
    if (char === quote) {
      const end = text.indexOf('"', pos + 1)
      if (end === -1) return undefined
      value = text.slice(pos + 1, end)
      pos = end + 1
    } else if (char === openBrace || char === openBracket) {
      if (open.length + (container === undefined ? 0 : 1) >= maxDepth) return undefined
      const isObject = char === openBrace
      if (text.charCodeAt(pos + 1) === (isObject ? closeBrace : closeBracket)) {
        value = isObject ? {} : []
        pos += 2
      } else {
        if (container !== undefined) {
          open.push(container)
          names.push(name)
        }
        container = isObject ? {} : []
        pos++
        if (isObject) {
          pos = readName(text, pos)
          if (pos === -1) return undefined
          name = lastName
        }
        continue
      }
    } else if (char === minus || (char >= zero && char <= nine)) {
      const end = integerEnd(text, pos)
      if (end === -1) return undefined
      value = Number(text.slice(pos, end))
      pos = end
    } else if (text.startsWith('null', pos)) {
      value = null
      pos += 4
    } else if (text.startsWith('true', pos)) {
      value = true
      pos += 4
    } else if (text.startsWith('false', pos)) {
      value = false
      pos += 5
    } else return undefined

    // the value goes into its container; a container that closes after it is itself a value
    for (;;) {
      if (container === undefined) return pos === length ? value : undefined
      const isArray = Array.isArray(container)
      if (isArray) (container as unknown[]).push(value)
      else {
        const object = container as Record<string, unknown>
        // a name met twice (or one the prototype has, such as `toString`: read by JSON.parse instead)
        if (object[name] !== undefined) return undefined
        object[name] = value
      }
      const next = text.charCodeAt(pos++)
      if (next === comma) {
        if (!isArray) {
          pos = readName(text, pos)
          if (pos === -1) return undefined
          name = lastName
        }
        break
      }
      if (next !== (isArray ? closeBracket : closeBrace)) return undefined
      value = container
      container = open.pop()
      name = names.pop() ?? ''
    }
  }
}

/** The member name readName read last (a second return value, without an object for it). */
let lastName = ''

/** Reads `"name":` at `pos` into lastName: the position after the colon, or -1 for a name refused. */
function readName(text: string, pos: number): number {
  if (text.charCodeAt(pos) !== quote) return -1
  const end = text.indexOf('"', pos + 1)
  if (end === -1 || text.charCodeAt(end + 1) !== colon) return -1
  const first = text.charCodeAt(pos + 1)
  // array-index names are serialised before the others, whatever order they were written in
  if (first >= zero && first <= nine) return -1
  const name = knownName(text, pos + 1, end) ?? text.slice(pos + 1, end)
  if (name === '__proto__') return -1
  lastName = name
  return end + 2
}

/**
 * The member names of calls (the envelope's, a transaction's and a log filter's), as constants:
 * a property set under one needs no lookup of the name (a name sliced from the text does).
 */
const knownNames = new Map<number, string[]>()
for (const name of [
  'jsonrpc',
  'id',
  'method',
  'params',
  'from',
  'to',
  'data',
  'input',
  'gas',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'value',
  'nonce',
  'type',
  'chainId',
  'accessList',
  'address',
  'topics',
  'fromBlock',
  'toBlock',
  'blockHash',
]) {
  knownNames.set(name.length, [...(knownNames.get(name.length) ?? []), name])
}

/** The constant for the name written from `start` to `end`, if it is one of knownNames. */
function knownName(text: string, start: number, end: number): string | undefined {
  const candidates = knownNames.get(end - start)
  if (candidates === undefined) return undefined
  for (const name of candidates) if (text.startsWith(name, start)) return name
  return undefined
}

/** Where the integer at `pos` ends, or -1 when it is not written as JSON.stringify writes a number. */
function integerEnd(text: string, pos: number): number {
  let end = text.charCodeAt(pos) === minus ? pos + 1 : pos
  const first = text.charCodeAt(end)
  if (first === zero) {
    end++
    // -0 is written 0
    if (end - pos === 2) return -1
  } else if (first > zero && first <= nine) {
    end++
    for (let char = text.charCodeAt(end); char >= zero && char <= nine; char = text.charCodeAt(++end));
  } else return -1
  // a fraction or an exponent after it is no separator: the caller refuses it
  const digits = end - pos - (text.charCodeAt(pos) === minus ? 1 : 0)
  return digits > maxIntegerDigits ? -1 : end
}
