import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readStringified } from './readStringified.ts'

/** What must hold for any text: no value, or JSON.parse's value, which serialises back to the text. */
function assertReadsAsParsed(text: string, maxDepth = 8): unknown {
  const value = readStringified(text, maxDepth)
  if (value === undefined) return undefined
  assert.deepEqual(value, JSON.parse(text), text)
  assert.equal(JSON.stringify(value), text)
  return value
}

/** A small seeded generator (mulberry32): the same cases on every run. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const names = [
  'to',
  'data',
  'from',
  'gas',
  'a',
  'Params',
  'params',
  '',
  '0x',
  '1',
  '__proto__',
  'toString',
  'é',
]
const strings = ['latest', '0x', '0xdeadbeef', '', 'a"b', 'back\\slash', 'line\nbreak', '\u2028', '😀', 'é']
const numbers = [0, 1, -1, 42, 2 ** 53 - 1, 123_456_789_012_345, 1.5, -0, 1e21, 1e-7]

function randomValue(next: () => number, depth: number): unknown {
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)] as T
  const kind = depth > 3 ? Math.floor(next() * 4) : Math.floor(next() * 6)
  if (kind === 0) return pick(strings)
  if (kind === 1) return pick(numbers)
  if (kind === 2) return pick([true, false, null])
  if (kind === 3) return `0x${Math.floor(next() * 2 ** 32).toString(16)}`
  if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1))
  const object: Record<string, unknown> = {}
  for (let index = Math.floor(next() * 4); index > 0; index--) {
    Object.defineProperty(object, pick(names), {
      value: randomValue(next, depth + 1),
      enumerable: true,
      configurable: true,
      writable: true,
    })
  }
  return object
}

describe('readStringified', () => {
  it('reads calls as clients write them, to the value JSON.parse gives', () => {
    const calls = [
      { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'eth_call',
        params: [{ to: '0x5fbdb2315678afecb367f032d93f642f64180aa3', data: '0x61bc221a' }, 'latest'],
      },
      { jsonrpc: '2.0', id: 'a-b', method: 'eth_getLogs', params: [{ topics: [null, ['0x1', '0x2']] }] },
      { jsonrpc: '2.0', id: null, method: 'eth_getProof', params: ['0x1', [], 'latest'] },
      { jsonrpc: '2.0', id: -3, method: 'x', params: [true, false, 0, { nested: { deeper: [1, {}] } }] },
    ]
    for (const call of calls) {
      const text = JSON.stringify(call)
      assert.deepEqual(assertReadsAsParsed(text), call)
    }
  })

  it('gives up on what JSON.stringify writes otherwise, or would write so', () => {
    for (const text of [
      '{"a":1,"a":2}', // a member named twice: serialised once
      '{"b":1,"0":2}', // an array-index name: serialised first
      '{"__proto__":{"polluted":1}}', // JSON.parse makes it a member; a plain assignment would not
      '[-0]',
      '[1.5]',
      '[1e3]',
      '[01]',
      '[1234567890123456]', // 16 digits
      '{"a" :1}',
      ' {}',
      '{}\n',
      '["a\\"b"]', // escapes
      '["\\u0061"]',
      '["\ud800"]', // a lone surrogate: serialised as an escape
      '["😀"]', // surrogates of any kind are left to JSON.parse
      '["tab\there"]',
    ]) {
      assert.equal(readStringified(text, 8), undefined, text)
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  it('gives up on text that is not JSON, as JSON.parse refuses it', () => {
    for (const text of [
      '',
      '{',
      '[1,]',
      '{"a":1,}',
      '{"a"}',
      '["a]',
      '[1]]',
      'nul',
      'tru',
      '{"a":1}x',
      '[1 ]',
      '-',
      '"',
    ]) {
      assert.equal(readStringified(text, 8), undefined, text)
    }
  })

  it('reads up to maxDepth arrays and objects inside one another, not one more', () => {
    assert.deepEqual(readStringified('[[[]]]', 3), [[[]]])
    assert.equal(readStringified('[[[[]]]]', 3), undefined)
    assert.deepEqual(readStringified('{"a":{"b":{}}}', 3), { a: { b: {} } })
    assert.equal(readStringified('{"a":{"b":{"c":{}}}}', 3), undefined)
    assert.deepEqual(readStringified('[{},[],{}]', 2), [{}, [], {}])
  })

  it('never reads a value other than JSON.parse, for any stringified value and any edit of one', () => {
    const next = random(12)
    let read = 0
    for (let round = 0; round < 3_000; round++) {
      const text = JSON.stringify(randomValue(next, 0))
      if (assertReadsAsParsed(text) !== undefined) read++
      // one character removed, doubled or replaced by one that matters to the grammar
      const at = Math.floor(next() * text.length)
      const edits = [
        text.slice(0, at) + text.slice(at + 1),
        text.slice(0, at) + text.slice(at, at + 1) + text.slice(at),
        text.slice(0, at) + '{}[]",:-0e. '.charAt(Math.floor(next() * 12)) + text.slice(at + 1),
      ]
      for (const edit of edits) assertReadsAsParsed(edit)
    }
    // most values are written the way the reader reads (the rest hold an escape, a fraction, a repeat)
    assert.ok(read > 1_000, `read ${read} of 3000`)
  })
})
