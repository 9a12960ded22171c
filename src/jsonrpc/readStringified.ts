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

/** A call's envelope as readStringified reads it: its members' values (undefined when absent). */
export type CallMembers = {
  jsonrpc: unknown
  id: unknown
  hasId: boolean
  method: unknown
  params: unknown
  /** Its members are jsonrpc, id, method and params, each once, and no other. */
  plain: boolean
}

/**
 * Reads a request body written the way JSON.stringify writes it, in one pass, straight into its
 * calls: one call's envelope, or a batch (an array) of them, each an object whose members are among
 * jsonrpc, id, method and params (their values read as readValue reads them), read into a
 * CallMembers rather than built as an object of its own. The text holds no whitespace, no string
 * with an escape, no number but an integer (no fraction, exponent or `-0`) of up to 15 digits, no
 * member named twice, no member named like an array index or `__proto__`, and at most `maxDepth`
 * arrays and objects inside one another (an envelope and a batch are one each). Its values are then
 * the ones JSON.parse gives, and serialising them writes the text back, so a node reads the text as
 * tollgate did. Any other text, well-formed or not (a fifth member, an element that is no object),
 * gives undefined: JSON.parse reads it instead. Most clients (viem, ethers, web3.js, cast) write
 * calls this way.
 */
export function readStringified(text: string, maxDepth: number): CallMembers | CallMembers[] | undefined {
  if (writtenOtherwise.test(text)) return undefined
  if (text.charCodeAt(0) !== openBracket) {
    const call = readCall(text, 0, maxDepth)
    return call !== undefined && valueEnd === text.length ? call : undefined
  }
  // a batch: its calls, each read as one is
  if (text.charCodeAt(1) === closeBracket) return text.length === 2 ? [] : undefined
  const calls: CallMembers[] = []
  let pos = 1
  for (;;) {
    const call = readCall(text, pos, maxDepth - 1)
    if (call === undefined) return undefined
    calls.push(call)
    pos = valueEnd
    const next = text.charCodeAt(pos++)
    if (next === closeBracket) return pos === text.length ? calls : undefined
    if (next !== comma) return undefined
  }
}

/** Where the value readCall or readValue read last ends (a second return value: read it only after a value). */
let valueEnd = -1

/** The envelope's members, each a bit: one met twice is refused. */
const jsonrpcBit = 1
const idBit = 2
const methodBit = 4
const paramsBit = 8

/** The call's envelope at `pos` (its members' names told by their first letter), or undefined. */
function readCall(text: string, pos: number, maxDepth: number): CallMembers | undefined {
  valueEnd = -1
  if (text.charCodeAt(pos) !== openBrace || maxDepth < 1) return undefined
  const call: CallMembers = {
    jsonrpc: undefined,
    id: undefined,
    hasId: false,
    method: undefined,
    params: undefined,
    plain: false,
  }
  let seen = 0
  pos++
  if (text.charCodeAt(pos) === closeBrace) {
    valueEnd = pos + 1
    return call
  }
  for (;;) {
    let bit: number
    let name: string
    switch (text.charCodeAt(pos + 1)) {
      case 0x6a: // j
        bit = jsonrpcBit
        name = '"jsonrpc":'
        break
      case 0x69: // i
        bit = idBit
        name = '"id":'
        break
      case 0x6d: // m
        bit = methodBit
        name = '"method":'
        break
      case 0x70: // p
        bit = paramsBit
        name = '"params":'
        break
      default:
        return undefined
    }
    if ((seen & bit) !== 0 || !text.startsWith(name, pos)) return undefined
    seen |= bit
    const value = readValue(text, pos + name.length, maxDepth - 1)
    if (value === undefined) return undefined
    if (bit === jsonrpcBit) call.jsonrpc = value
    else if (bit === idBit) {
      call.id = value
      call.hasId = true
    } else if (bit === methodBit) call.method = value
    else call.params = value
    pos = valueEnd
    const next = text.charCodeAt(pos++)
    if (next === closeBrace) {
      call.plain = seen === (jsonrpcBit | idBit | methodBit | paramsBit)
      valueEnd = pos
      return call
    }
    if (next !== comma) return undefined
  }
}

/**
 * Reads the value at `start` (readStringified's rules), without recursion: the arrays and objects
 * being filled are on a stack of their own. Where it ends goes to valueEnd; undefined when the text
 * there is not such a value.
 */
function readValue(text: string, start: number, maxDepth: number): unknown {
  valueEnd = -1
  // the arrays and objects being filled, each with the member name its next value goes under (made
  // when one holds another: most values are a string, a number or one array)
  let open: (unknown[] | Record<string, unknown>)[] | undefined
  let names: string[] | undefined
  let pos = start
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
      if ((open?.length ?? 0) + (container === undefined ? 0 : 1) >= maxDepth) return undefined
      const isObject = char === openBrace
      if (text.charCodeAt(pos + 1) === (isObject ? closeBrace : closeBracket)) {
        value = isObject ? {} : []
        pos += 2
      } else {
        if (container !== undefined) {
          open ??= []
          names ??= []
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
      if (container === undefined) {
        valueEnd = pos
        return value
      }
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
      container = open?.pop()
      name = names?.pop() ?? ''
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
 * The member names of a call's params (a transaction's and a log filter's), as constants: a
 * property set under one needs no lookup of the name (a name sliced from the text does). By length.
 */
const knownNames: string[][] = []
for (const name of [
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
  knownNames[name.length] = [...(knownNames[name.length] ?? []), name]
}

/** The constant for the name written from `start` to `end`, if it is one of knownNames. */
function knownName(text: string, start: number, end: number): string | undefined {
  const candidates = knownNames[end - start]
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
