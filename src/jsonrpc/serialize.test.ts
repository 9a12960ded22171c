import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AnswerParts } from './AnswerParts.ts'
import { serializeBatch } from './serialize.ts'

describe('serializeBatch', () => {
  it('puts text, node bytes and answers in parts into one batch answer, without copying them', () => {
    const parts = new AnswerParts([
      Buffer.from('{"jsonrpc":"2.0","id":3,"result":'),
      Buffer.from('[1,2]'),
      Buffer.from('}'),
    ])
    assert.equal(parts.byteLength, parts.toString().length)
    const nodeBytes = Buffer.from('{"jsonrpc":"2.0","id":2,"result":"é"}')
    const batch = serializeBatch(['{"jsonrpc":"2.0","id":1,"result":"0x1"}', nodeBytes, parts])
    assert.ok(batch.parts.includes(nodeBytes))
    for (const part of parts.parts) assert.ok(batch.parts.includes(part))
    assert.deepEqual(JSON.parse(batch.toString()), [
      { jsonrpc: '2.0', id: 1, result: '0x1' },
      { jsonrpc: '2.0', id: 2, result: 'é' },
      { jsonrpc: '2.0', id: 3, result: [1, 2] },
    ])
  })
})
