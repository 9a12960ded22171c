import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { answerMember, answerMemberOfText } from './answerMember.ts'

/** Both readers, on the same answer. */
const read = (answer: string) => {
  const member = answerMember(Buffer.from(answer))
  assert.equal(answerMemberOfText(answer), member, answer)
  return member
}

describe('answerMember', () => {
  it('the first of "result" and "error": just past its colon, negated for an error', () => {
    const result = '{"jsonrpc":"2.0","id":1,"result":"0x1"}'
    assert.equal(read(result), result.indexOf('"0x1"'))
    const error = '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"\\"result\\":"}}'
    assert.equal(read(error), -error.indexOf('{"code"'))
    assert.ok(read('{"error":{"code":1},"result":"0x1"}') < 0, 'the first one counts')
    assert.ok(read('{"result":"0x1","error":{"code":1}}') > 0)
  })

  it('finds the name wherever it ends, at an even or an odd byte', () => {
    for (const id of ['1', '12', '123', '1234', '"a"', '"ab"']) {
      const result = `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`
      assert.equal(read(result), result.indexOf('"0x1"'), result)
      const error = `{"jsonrpc":"2.0","id":${id},"error":{"code":1}}`
      assert.equal(read(error), -error.indexOf('{"code"'), error)
      assert.equal(read(`{"id":${id},"error":{}}`), -`{"id":${id},"error":`.length)
    }
    assert.equal(read('{"error":1}'), -9)
    assert.equal(read('{"result":1}'), 10)
  })

  it('text within a string is no name: its quotes are escaped', () => {
    const answer = '{"jsonrpc":"2.0","id":"\\"result\\":","error":{"code":1}}'
    assert.equal(read(answer), -answer.indexOf('{"code"'))
  })

  it('0 for neither among the first 128 bytes, or for a name not as nodes write it', () => {
    assert.equal(read('{"jsonrpc":"2.0","id":1}'), 0)
    assert.equal(read('{"jsonrpc":"2.0","id":1,"result" :"0x1"}'), 0)
    assert.equal(read('{"jsonrpc":"2.0","id":1,"myresult":"0x1"}'), 0)
    assert.equal(read(`{"jsonrpc":"2.0","id":"${'a'.repeat(120)}","result":"0x1"}`), 0)
  })

  it('a name counts when its colon is among the first 128 bytes, at either parity; one past them does not', () => {
    for (const name of ['result', 'error']) {
      for (const colon of [125, 126, 127, 128, 129]) {
        // an id that puts the name's colon at `colon`
        const prefix = '{"jsonrpc":"2.0","id":"'
        const idChars = colon - prefix.length - `","${name}"`.length
        const answer = `${prefix}${'a'.repeat(idChars)}","${name}":1}`
        assert.equal(answer.indexOf(`"${name}":`) + name.length + 2, colon)
        const expected = colon < 128 ? (name === 'result' ? 1 : -1) * (colon + 1) : 0
        assert.equal(read(answer), expected, `${name} at ${colon}`)
        // the answer ending just after the colon
        assert.equal(read(answer.slice(0, colon + 1)), expected)
      }
    }
  })

  it('reads as a plain search for the first name would, on any answer', () => {
    /** The first colon among the first 128 characters that ends `"result"` or `"error"`. */
    const reference = (text: string) => {
      for (let colon = 0; colon < Math.min(text.length, 128); colon++) {
        if (text[colon] !== ':') continue
        if (text.slice(colon - 8, colon) === '"result"' && colon >= 8) return colon + 1
        if (text.slice(colon - 7, colon) === '"error"' && colon >= 7) return -(colon + 1)
      }
      return 0
    }
    let state = 5
    const next = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
      return state / 2_147_483_648
    }
    const pieces = [
      '"result":',
      '"error":',
      '"',
      ':',
      '\\"',
      'r',
      'x',
      ',',
      '{',
      '"id":1',
      '"result"',
      'error":',
    ]
    for (let round = 0; round < 3_000; round++) {
      let text = ''
      while (text.length < 140) text += pieces[Math.floor(next() * pieces.length)]
      assert.equal(read(text), reference(text), text)
    }
  })
})
