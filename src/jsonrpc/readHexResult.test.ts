import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readHexResult } from './readHexResult.ts'

const answer = (result: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, result })

describe('readHexResult', () => {
  it('a hex quantity result, from bytes or text, any case', () => {
    assert.equal(readHexResult(Buffer.from(answer('0x1a'))), 26n)
    assert.equal(readHexResult(answer('0x1a')), 26n)
    assert.equal(readHexResult(Buffer.from(answer('0xABCdef'))), 0xabcdefn)
    assert.equal(readHexResult(Buffer.from(answer('0x0'))), 0n)
  })

  it('up to 16 digits, exactly (past what a double holds)', () => {
    assert.equal(readHexResult(Buffer.from(answer('0xfffffffffffff'))), 0xfffffffffffffn)
    assert.equal(readHexResult(Buffer.from(answer('0xffffffffffffffff'))), 0xffffffffffffffffn)
    assert.equal(readHexResult(Buffer.from(answer('0x1ffffffffffffff1'))), 0x1ffffffffffffff1n)
    assert.equal(readHexResult(answer('0x1ffffffffffffff1')), 0x1ffffffffffffff1n)
    assert.equal(readHexResult(Buffer.from(answer('0x1ffffffffffffffff'))), undefined)
    assert.equal(readHexResult(answer('0x1ffffffffffffffff')), undefined)
  })

  it('undefined for any other result, an error, or a result not near the start', () => {
    for (const other of [
      answer('0x'),
      answer('0x1g'),
      answer('12'),
      answer(26),
      answer(null),
      answer({ number: '0x1' }),
      answer({ result: '0x1' }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: '"result":"0x1"' } }),
      answer('0x1a', 'x'.repeat(300)),
      '{"jsonrpc":"2.0","id":1,"result":"0x1a',
    ]) {
      assert.equal(readHexResult(Buffer.from(other)), undefined, other)
      assert.equal(readHexResult(other), undefined, other)
    }
  })

  it('the id may hold the same text: only the member name counts', () => {
    assert.equal(readHexResult(Buffer.from(answer('0x2', 'result'))), 2n)
    assert.equal(readHexResult(answer('0x2', 'result')), 2n)
  })
})
