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
})
