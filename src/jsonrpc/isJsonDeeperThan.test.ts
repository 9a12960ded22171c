import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isJsonDeeperThan } from './isJsonDeeperThan.ts'

const nested = (levels: number, open = '[', close = ']') => `${open.repeat(levels)}${close.repeat(levels)}`

describe('isJsonDeeperThan', () => {
  it('exactly 64 levels pass, 65 do not, for arrays, objects and both mixed', () => {
    assert.equal(isJsonDeeperThan(nested(64), 64), false)
    assert.equal(isJsonDeeperThan(nested(65), 64), true)
    const objects = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`
    assert.equal(isJsonDeeperThan(objects(64), 64), false)
    assert.equal(isJsonDeeperThan(objects(65), 64), true)
    const mixed = (levels: number) => {
      let text = '1'
      for (let level = 0; level < levels; level++) text = level % 2 === 0 ? `[${text}]` : `{"k":${text}}`
      return text
    }
    assert.equal(isJsonDeeperThan(mixed(64), 64), false)
    assert.equal(isJsonDeeperThan(mixed(65), 64), true)
  })

  it('counts depth, not brackets: siblings do not add up', () => {
    const wide = `[${Array.from({ length: 1_000 }, () => nested(10)).join(',')}]`
    assert.equal(isJsonDeeperThan(wide, 11), false)
    assert.equal(isJsonDeeperThan(wide, 10), true)
  })

  it('brackets inside strings do not count', () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: '[[[[', method: '{{{{', params: ['['.repeat(1_000)] })
    assert.equal(isJsonDeeperThan(body, 2), false)
    assert.equal(isJsonDeeperThan(body, 1), true)
  })

  it('an escaped quote does not end a string; an escaped backslash before a quote does not escape it', () => {
    // "a\"[[[[" is one string: the brackets are inside it
    assert.equal(isJsonDeeperThan(JSON.stringify(['a"[[[[']), 1), false)
    // "a\\" ends after the escaped backslash: the brackets after it count
    assert.equal(isJsonDeeperThan(`["a\\\\",${nested(3)}]`, 3), true)
    assert.equal(isJsonDeeperThan(`["a\\\\",${nested(3)}]`, 4), false)
    // three backslashes: an escaped backslash then an escaped quote, still inside the string
    assert.equal(isJsonDeeperThan(`["a\\\\\\"${'['.repeat(9)}"]`, 1), false)
    assert.equal(isJsonDeeperThan(JSON.stringify(['\\', '\\"', '"\\', '[\\]']), 1), false)
  })

  it('a string full of escaped quotes is read to its real end', () => {
    // past a few escaped quotes the scan goes character by character: same answers
    for (const count of [1, 8, 9, 100, 100_000]) {
      const inside = `${'\\"['.repeat(count)}\\\\`
      assert.equal(isJsonDeeperThan(`["${inside}",${nested(3)}]`, 4), false, String(count))
      assert.equal(isJsonDeeperThan(`["${inside}",${nested(3)}]`, 3), true, String(count))
      assert.equal(isJsonDeeperThan(`["${inside}`, 1), false, `${count}, never ends`)
    }
  })

  it('object keys are strings too', () => {
    assert.equal(isJsonDeeperThan('{"[[[[":{"}}}{{{":1}}', 2), false)
    assert.equal(isJsonDeeperThan('{"[[[[":{"}}}{{{":1}}', 1), true)
  })

  it('text that is not JSON gets an answer and no exception (the parser refuses it later)', () => {
    for (const text of ['', '"', '"[[[[', '\\', ']]]]', '}}{{', 'x'.repeat(1_000), '"\\"']) {
      assert.equal(isJsonDeeperThan(text, 2), false, text)
    }
    assert.equal(isJsonDeeperThan('['.repeat(100_000), 64), true)
    // closing more than was opened never hides what is opened afterwards
    assert.equal(isJsonDeeperThan(`${']'.repeat(10)}${'['.repeat(65)}`, 64), true)
  })
})
