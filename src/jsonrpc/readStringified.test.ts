import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readStringified } from './readStringified.ts'

/**
 * A value as readStringified reads a call's params: `text` as a call's one param (the envelope and
 * the params are two levels more); undefined when it does not read that call, or reads other params.
 */
function readParam(text: string, maxDepth: number): unknown {
  const call = readStringified(`{"jsonrpc":"2.0","id":1,"method":"m","params":[${text}]}`, maxDepth + 2)
  if (call === undefined || Array.isArray(call)) return undefined
  const { params } = call
  return Array.isArray(params) && params.length === 1 ? params[0] : undefined
}

/** What must hold for any text: no value, or JSON.parse's value, which serialises back to the text. */
function assertReadsAsParsed(text: string, maxDepth = 8): unknown {
  const value = readParam(text, maxDepth)
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
  it('reads calls as clients write them, members in any order, to the values JSON.parse gives', () => {
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
      // ethers' order
      { method: 'eth_chainId', params: [], id: 2, jsonrpc: '2.0' },
    ]
    for (const call of calls) {
      const text = JSON.stringify(call)
      assert.deepEqual(readStringified(text, 8), { ...call, hasId: true, plain: true }, text)
      assert.deepEqual(readStringified(`[${text},${text}]`, 8), [
        { ...call, hasId: true, plain: true },
        { ...call, hasId: true, plain: true },
      ])
      assert.deepEqual(assertReadsAsParsed(JSON.stringify(call.params)), call.params)
    }
  })

  it('a call without some of the four members is read, and not plain; one with a fifth, or one twice, is not read', () => {
    const absent = { jsonrpc: undefined, id: undefined, hasId: false, method: undefined, params: undefined }
    assert.deepEqual(readStringified('{"jsonrpc":"2.0","method":"m"}', 8), {
      ...absent,
      jsonrpc: '2.0',
      method: 'm',
      plain: false,
    })
    assert.deepEqual(readStringified('{}', 8), { ...absent, plain: false })
    assert.deepEqual(readStringified('{"id":null}', 8), { ...absent, id: null, hasId: true, plain: false })
    assert.deepEqual(readStringified('[]', 8), [])
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[],"Method":"n"}',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[],"method":"n"}',
      '{"jsonrpc":"2.0","ids":1,"method":"m","params":[]}',
      '{"jsonrpc":"2.0","idx":1,"method":"m","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"m","p":[]}',
      '{"__proto__":{},"jsonrpc":"2.0","id":1,"method":"m","params":[]}',
      '',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[]',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[]}]',
      '[{"jsonrpc":"2.0","id":1,"method":"m","params":[]},1]',
      '[{"jsonrpc":"2.0","id":1,"method":"m","params":[]},]',
      '1',
      '"m"',
    ]) {
      assert.equal(readStringified(text, 8), undefined, text)
    }
  })

  it('counts the envelope and the batch as levels', () => {
    assert.ok(readStringified('{"params":[]}', 2))
    assert.equal(readStringified('{"params":[[]]}', 2), undefined)
    assert.equal(readStringified('{"params":[]}', 1), undefined)
    assert.ok(readStringified('[{"params":[]}]', 3))
    assert.equal(readStringified('[{"params":[]}]', 2), undefined)
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
      assert.equal(readParam(text, 8), undefined, text)
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
      assert.equal(readParam(text, 8), undefined, text)
    }
  })

  it('reads up to maxDepth arrays and objects inside one another, not one more', () => {
    assert.deepEqual(readParam('[[[]]]', 3), [[[]]])
    assert.equal(readParam('[[[[]]]]', 3), undefined)
    assert.deepEqual(readParam('{"a":{"b":{}}}', 3), { a: { b: {} } })
    assert.equal(readParam('{"a":{"b":{"c":{}}}}', 3), undefined)
    assert.deepEqual(readParam('[{},[],{}]', 2), [{}, [], {}])
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

  it('never reads a call other than JSON.parse, for any stringified call or batch and any edit of one', () => {
    const next = random(7)
    const members = ['jsonrpc', 'id', 'method', 'params', 'Params', 'i', 'x']
    const randomCall = () => {
      const call: Record<string, unknown> = {}
      for (let index = Math.floor(next() * 5); index > 0; index--) {
        const name = members[Math.floor(next() * members.length)] as string
        call[name] = name === 'jsonrpc' && next() < 0.8 ? '2.0' : randomValue(next, 1)
      }
      return call
    }
    /** JSON.parse's reading of a call, as readStringified gives it. */
    const asRead = (value: unknown) => {
      const call = value as Record<string, unknown>
      const names = Object.keys(call)
      const four = ['jsonrpc', 'id', 'method', 'params']
      return {
        jsonrpc: call.jsonrpc,
        id: call.id,
        hasId: 'id' in call,
        method: call.method,
        params: call.params,
        plain: names.length === 4 && four.every((name) => names.includes(name)),
      }
    }
    let read = 0
    for (let round = 0; round < 2_000; round++) {
      const value = next() < 0.3 ? [randomCall(), randomCall()] : randomCall()
      const text = JSON.stringify(value)
      const at = Math.floor(next() * text.length)
      for (const each of [
        text,
        text.slice(0, at) + text.slice(at + 1),
        text.slice(0, at) + '{}[]",:-0e. '.charAt(Math.floor(next() * 12)) + text.slice(at + 1),
      ]) {
        const calls = readStringified(each, 8)
        if (calls === undefined) continue
        if (each === text) read++
        const parsed = JSON.parse(each) as unknown
        assert.equal(JSON.stringify(parsed), each)
        const expected = Array.isArray(parsed) ? parsed.map(asRead) : asRead(parsed)
        assert.deepEqual(calls, expected, each)
      }
    }
    assert.ok(read > 500, `read ${read} of 2000`)
  })
})
