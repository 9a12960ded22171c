import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readNodeError } from './readNodeError.ts'

describe('readNodeError', () => {
  it('reads the error of short answers only; results are not parsed', () => {
    const error = { code: -32000, message: 'header not found' }
    assert.deepEqual(readNodeError(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error }))), error)
    assert.equal(readNodeError(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}')), undefined)
    // a result that mentions "error" (a call trace) is not an error answer
    assert.equal(
      readNodeError(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"error":"out of gas"}}')),
      undefined,
    )
    assert.equal(readNodeError(Buffer.from('[{"jsonrpc":"2.0","id":1,"error":{"code":1}}]')), undefined)
    assert.equal(readNodeError(Buffer.from('{"error": broken')), undefined)
    const long = Buffer.from(
      JSON.stringify({ jsonrpc: '2.0', id: 1, error: { ...error, data: 'x'.repeat(5000) } }),
    )
    assert.equal(readNodeError(long), undefined, 'longer than any error worth retrying: an answer')
  })

  it('reads an error answer up to the length it is given', () => {
    const error = { code: 3, message: 'execution reverted', data: `0x${'ab'.repeat(3000)}` }
    const answer = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error }))
    assert.equal(readNodeError(answer), undefined)
    assert.deepEqual(readNodeError(answer, 65_536), error)
    assert.deepEqual(readNodeError(answer.toString(), 65_536), error, 'a string answer alike')
  })

  it('reads a string answer as it reads its bytes', () => {
    const answers = [
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}',
      '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
      '{"jsonrpc":"2.0","id":1,"result":{"error":"out of gas"}}',
      '{"error":{"code":1},"jsonrpc":"2.0","id":1}',
      `{"jsonrpc":"2.0","id":${'1'.repeat(130)},"error":{"code":2}}`,
      '[{"jsonrpc":"2.0","id":1,"error":{"code":1}}]',
      '{"error": broken',
    ]
    for (const answer of answers)
      assert.deepEqual(readNodeError(answer), readNodeError(Buffer.from(answer)), answer)
  })

  it('reads the first member among the first 128 bytes: one that ends there counts, one past it does not', () => {
    // a malformed answer with both members: which one is read first decides
    const answerWith = (idChars: number) =>
      `{"jsonrpc":"2.0","id":"${'a'.repeat(idChars)}","result":null,"error":{"code":1}}`
    const ending = answerWith(94)
    assert.equal(ending.indexOf('"result":') + '"result":'.length, 128)
    const past = answerWith(95)
    for (const read of [
      (text: string) => readNodeError(text),
      (text: string) => readNodeError(Buffer.from(text)),
    ]) {
      assert.equal(read(ending), undefined, 'a result')
      assert.deepEqual(read(past), { code: 1 }, 'no member seen: parsed')
    }
  })
})
