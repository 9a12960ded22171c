import { getMethodSpec, getOfferedMethods } from '../../src/methods/methodTable.ts'
import { createRandom, type Random } from './createRandom.ts'
import { fieldNames, notOffered, rawStrings, scalars, unicode, words } from './fuzzVocabulary.ts'

/**
 * Hostile JSON-RPC bodies for the fuzzer (bench/fuzz.ts) and its slice in the tests
 * (test/fuzz.e2e.test.ts). Body `index` of seed `seed` is always the same bytes, whichever run or
 * transport asks for it, so a finding is replayed from its seed and index alone.
 */

export type FuzzOptions = {
  seed: number
  /** The gateway's `server.maxJsonDepth`: nesting is generated on both sides of it. */
  maxJsonDepth: number
  /** The gateway's `server.maxBatchSize`: batches are generated up to it, and a few past it. */
  maxBatchSize: number
  /** The longest giant string. */
  maxStringChars: number
  /** When set, a few bodies are made larger than this (the gateway's `server.maxBodyBytes`: a 413). */
  maxBodyBytes?: number
  /** Real addresses and hashes of the chain behind the gateway, so some valid calls find something. */
  anchors?: { addresses: readonly string[]; hashes: readonly string[] }
}

export type FuzzKind =
  | 'bytes'
  | 'garbage'
  | 'truncated'
  | 'structural'
  | 'envelope'
  | 'params'
  | 'batch'
  | 'deep'
  | 'giant'

/** Text, or raw bytes (which need not be UTF-8; over WebSocket they go as a binary frame). */
export type FuzzBody = { index: number; kind: FuzzKind; body: string | Buffer }

const kindWeights: [FuzzKind, number][] = [
  ['bytes', 5],
  ['garbage', 4],
  ['truncated', 8],
  ['structural', 8],
  ['envelope', 12],
  ['params', 40],
  ['batch', 11],
  ['deep', 7],
  ['giant', 5],
]
const totalWeight = kindWeights.reduce((sum, [, weight]) => sum + weight, 0)

/** Body `index` of the run `options.seed`. */
export function fuzzBody(index: number, options: FuzzOptions): FuzzBody {
  const random = createRandom(Math.imul(options.seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index, 0xc2b2ae35))
  const fuzz = createFuzzer(random, options)
  let roll = random.int(totalWeight)
  let kind: FuzzKind = 'params'
  for (const [name, weight] of kindWeights) {
    if (roll < weight) {
      kind = name
      break
    }
    roll -= weight
  }
  return { index, kind, body: fuzz[kind]() }
}

const offered = getOfferedMethods()
/** Valid values for each kind of parameter: a method's valid arguments are those its parsers accept. */
function validCandidates(random: Random, anchors: FuzzOptions['anchors']): unknown[] {
  const address = anchors?.addresses.length ? random.pick(anchors.addresses) : hexDigits(random, 40)
  const hash = anchors?.hashes.length ? random.pick(anchors.hashes) : hexDigits(random, 64)
  return [
    address,
    hash,
    'latest',
    '0x1',
    '0x0',
    'earliest',
    'finalized',
    true,
    false,
    '0x',
    '0x70a08231',
    4,
    '0x4',
    [25, 75],
    [hash],
    ['0x0'],
    ['trace'],
    [],
    'newHeads',
    'logs',
    { to: address, data: '0x' },
    { from: address, to: address, value: '0x0', gas: '0x5208' },
    { fromBlock: '0x0', toBlock: 'latest', address, topics: [null, hash] },
    { blockHash: hash },
    { blockNumber: '0x1' },
    { tracer: 'callTracer' },
    { blockStateCalls: [] },
    {},
  ]
}

/** `0x` and `length` random digits; long ones repeat a random 256-digit run (cheap to make). */
const accepted = new Map<string, number[][]>()

/** For each parameter of `method`, the indices of the valid candidates its parser accepts. */
function acceptedCandidates(method: string): number[][] {
  let indices = accepted.get(method)
  if (!indices) {
    const candidates = validCandidates(createRandom(0), undefined)
    indices = getMethodSpec(method).params.map((spec, position) =>
      candidates.flatMap((candidate, index) => {
        try {
          spec.parse(candidate, position)
          return [index]
        } catch {
          return []
        }
      }),
    )
    accepted.set(method, indices)
  }
  return indices
}

function hexDigits(random: Random, length: number, digits = '0123456789abcdef'): string {
  let run = ''
  for (let index = 0; index < Math.min(length, 256); index++) run += digits[random.int(digits.length)]
  return `0x${length <= 256 ? run : run.repeat(Math.ceil(length / 256)).slice(0, length)}`
}

function createFuzzer(random: Random, options: FuzzOptions) {
  const { maxJsonDepth, maxBatchSize, maxStringChars } = options
  const str = (text: string) => JSON.stringify(text)

  function hex(): string {
    const length = random.pick([0, 1, 2, 3, 8, 16, 17, 39, 40, 41, 63, 64, 65, 66, 128, 1_000])
    let text = hexDigits(random, length, random.pick(['0123456789abcdef', '0123456789ABCDEF', '0g', '0']))
    if (random.chance(0.1)) text = text.replace('0x', random.pick(['0X', '', '0x00', 'x', '0x0x']))
    return str(text)
  }

  /** A string of up to `limit` characters: hex, or one character (or escape) over and over. */
  function giantString(limit = maxStringChars): string {
    const length = Math.min(limit, random.pick([1_000, 65_536, limit, random.int(limit + 1)]))
    if (random.chance(0.5)) return str(hexDigits(random, length))
    const unit = random.pick(['a', '💥', '\\"', '\\u0000', '[', ' '])
    return `"${unit.repeat(Math.max(1, Math.floor(length / unit.length)))}"`
  }

  /** An array/object nest of `levels` levels around a scalar. */
  function nest(levels: number): string {
    let text = random.pick(['1', '"x"', 'null', '[]', '{}'])
    const closers: string[] = []
    let open = ''
    for (let level = 0; level < levels; level++) {
      if (random.chance(0.5)) {
        open += '['
        closers.push(']')
      } else {
        open += `{${str(random.pick(fieldNames))}:`
        closers.push('}')
      }
    }
    text = open + text + closers.reverse().join('')
    return text
  }

  /** Any JSON value as text: every type, odd lengths, huge numbers, unicode, duplicate keys, nesting. */
  function value(depth: number): string {
    switch (random.int(12)) {
      case 0:
      case 1:
        return random.pick(scalars)
      case 2:
      case 3:
        return hex()
      case 4:
        return str(random.pick(words))
      case 5:
        return random.chance(0.5) ? str(random.pick(unicode)) : random.pick(rawStrings)
      case 6:
        return depth > 3
          ? '[]'
          : `[${Array.from({ length: random.int(5) }, () => value(depth + 1)).join(',')}]`
      case 7:
        return depth > 3 ? '{}' : object(depth + 1)
      case 8:
        // nesting around the limit, counted from the envelope (2 levels) and where this value sits
        return nest(Math.max(1, maxJsonDepth - 2 - depth + random.int(7) - 4))
      case 9:
        // long, but small enough that a batch of a thousand such calls stays a body the gateway reads
        return random.chance(0.5) ? giantString(4_096) : `[${Array(random.int(500)).fill('"0x1"').join(',')}]`
      case 10:
        return JSON.stringify(random.pick(validCandidates(random, options.anchors)))
      default:
        return str(random.pick(offered))
    }
  }

  /** An object with duplicate keys, prototype names and wrong values among its members. */
  function object(depth: number, base: Record<string, unknown> = {}): string {
    const keys = Object.keys(base)
    const members = Object.entries(base).map(([key, item]) => `${str(key)}:${JSON.stringify(item)}`)
    for (let count = random.int(5); count > 0; count--) {
      // a key already there is a duplicate: JSON.parse keeps the last one
      const key = keys.length > 0 && random.chance(0.3) ? random.pick(keys) : random.pick(fieldNames)
      keys.push(key)
      members.push(`${str(key)}:${value(depth)}`)
    }
    return `{${members.join(',')}}`
  }

  /** A JSON-RPC envelope from member texts (undefined: left out), in any member order. */
  function envelope(members: Record<string, string | undefined>): string {
    const parts = Object.entries(members)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([key, text]) => `${str(key)}:${text}`)
    if (random.chance(0.1)) parts.push(`${str(random.pick(fieldNames))}:${value(1)}`)
    if (random.chance(0.3)) parts.sort(() => random.next() - 0.5)
    const space = random.chance(0.1) ? random.pick([' ', '\n', '\t', '\r\n ']) : ''
    return `${space}{${space}${parts.join(`,${space}`)}${space}}${space}`
  }

  const okId = () => random.pick(['1', '"x"', '0', 'null', '42', '"💥"', '-1', '1.5'])

  /** A call to an offered method: valid arguments, then some of them (or a field of one) mutated. */
  function call(): string {
    const method = random.pick(offered)
    const candidates = validCandidates(random, options.anchors)
    const args = acceptedCandidates(method).map((accepted) =>
      accepted.length > 0 ? candidates[random.pick(accepted)] : null,
    )
    const texts = args.map((arg) => JSON.stringify(arg))
    // one in eleven is left valid: calls that reach the node, among the hostile ones
    const mode = random.int(11)
    if (mode === 10) {
      // unchanged
    } else if (mode < 5 && texts.length > 0) texts[random.int(texts.length)] = value(2)
    else if (mode < 7) for (let index = 0; index < texts.length; index++) texts[index] = value(2)
    else if (mode < 8) texts.push(...Array.from({ length: 1 + random.int(3) }, () => value(2)))
    else if (mode < 9) texts.splice(random.int(texts.length + 1))
    else {
      const index = args.findIndex((arg) => typeof arg === 'object' && arg !== null && !Array.isArray(arg))
      if (index >= 0) texts[index] = object(3, args[index] as Record<string, unknown>)
      else if (texts.length > 0) texts[random.int(texts.length)] = value(2)
    }
    return envelope({
      jsonrpc: '"2.0"',
      ...(random.chance(0.95) ? { id: okId() } : {}),
      method: str(method),
      params: `[${texts.join(',')}]`,
    })
  }

  /** The envelope itself wrong: version, id, method and params of every type, members missing. */
  function badEnvelope(): string {
    const maybe = (text: () => string) => (random.chance(0.15) ? undefined : text())
    return envelope({
      jsonrpc: maybe(() =>
        random.chance(0.5) ? '"2.0"' : random.pick(['"1.0"', '2', '2.0', '"2"', '""', 'null']),
      ),
      id: maybe(() => (random.chance(0.5) ? okId() : value(2))),
      method: maybe(() => (random.chance(0.5) ? str(random.pick([...notOffered, ...offered])) : value(2))),
      params: maybe(() => (random.chance(0.5) ? '[]' : value(2))),
    })
  }

  function batchItem(): string {
    const roll = random.int(10)
    if (roll < 6) return call()
    if (roll < 8) return badEnvelope()
    if (roll < 9) return value(1)
    return envelope({ jsonrpc: '"2.0"', method: str(random.pick(offered)), params: '[]' }) // a notification
  }

  return {
    bytes: (): Buffer => Buffer.from(Array.from({ length: random.int(300) }, () => random.int(256))),
    garbage: (): string =>
      random.pick([
        '',
        ' ',
        '\n',
        '\ufeff{}',
        'null',
        '"x"',
        '1',
        'NaN',
        'undefined',
        '{}',
        '[[]]',
        '[null]',
        "{'jsonrpc':'2.0'}",
        '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}',
        '/* */{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
        Array.from({ length: random.int(200) }, () => String.fromCodePoint(random.int(0xd800))).join(''),
      ]),
    truncated: (): string => {
      const text = random.chance(0.7) ? call() : `[${call()},${call()}]`
      return text.slice(0, random.int(text.length))
    },
    structural: (): string => {
      const chars = [...(random.chance(0.8) ? call() : `[${call()},${badEnvelope()}]`)]
      for (let count = 1 + random.int(3); count > 0; count--) {
        const at = random.int(chars.length)
        const piece = random.pick(['{', '}', '[', ']', ',', ':', '"', '\\', ',,', '', ' ', 'x', '0'])
        const action = random.int(3)
        if (action === 0) chars.splice(at, 1)
        else if (action === 1) chars.splice(at, 0, piece)
        else chars[at] = piece
      }
      return chars.join('')
    },
    envelope: badEnvelope,
    params: call,
    batch: (): string => {
      const roll = random.next()
      if (roll < 0.02) return '[]'
      let size = 1 + random.int(10)
      if (roll > 0.99) size = maxBatchSize + 1 + random.int(10)
      else if (roll > 0.97) size = 100 + random.int(maxBatchSize - 99)
      else if (roll > 0.85) size = 10 + random.int(90)
      const items = Array.from({ length: size }, batchItem)
      return random.chance(0.03) ? `[[${items.join(',')}]]` : `[${items.join(',')}]`
    },
    deep: (): string => {
      const levels = random.chance(0.1)
        ? random.pick([1_000, 5_000, 100_000])
        : maxJsonDepth - 2 - random.int(4) + random.int(6)
      const nested = nest(levels)
      const where = random.int(4)
      if (where === 0) return nested
      if (where === 1)
        return envelope({ jsonrpc: '"2.0"', id: okId(), method: '"eth_call"', params: `[${nested}]` })
      if (where === 2) {
        // deep inside eth_call's third argument (state overrides), where JSON.stringify once overflowed
        const target = JSON.stringify({ to: hexDigits(random, 40) })
        return envelope({
          jsonrpc: '"2.0"',
          id: okId(),
          method: '"eth_call"',
          params: `[${target},"latest",${nested}]`,
        })
      }
      // brackets inside strings are not nesting
      return envelope({
        jsonrpc: '"2.0"',
        id: okId(),
        method: '"eth_chainId"',
        params: `[${str('['.repeat(levels))}]`,
      })
    },
    giant: (): string => {
      const { maxBodyBytes } = options
      if (maxBodyBytes !== undefined && random.chance(0.1)) {
        const filler = hexDigits(random, maxBodyBytes + random.int(1_024))
        return envelope({
          jsonrpc: '"2.0"',
          id: okId(),
          method: '"eth_sendRawTransaction"',
          params: `[${str(filler)}]`,
        })
      }
      const method = random.pick(offered)
      const count = 1 + random.int(3)
      const args = Array.from({ length: count }, () =>
        random.chance(0.5) ? giantString(Math.floor(maxStringChars / count)) : value(2),
      )
      if (random.chance(0.3)) {
        const count = 2 + random.int(8)
        const calls = Array.from({ length: count }, () =>
          envelope({
            jsonrpc: '"2.0"',
            id: okId(),
            method: str(method),
            params: `[${giantString(Math.floor(maxStringChars / count))}]`,
          }),
        )
        return `[${calls.join(',')}]`
      }
      return envelope({ jsonrpc: '"2.0"', id: okId(), method: str(method), params: `[${args.join(',')}]` })
    },
  }
}
