import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AnswerParts } from './AnswerParts.ts'
import { serializeBatch } from './serialize.ts'
import { toRawIdStandIn, withRawIds } from './withRawIds.ts'

const rawIds = ['12345678901234567890123', '1.50']
const first = JSON.stringify(toRawIdStandIn(0))
const second = JSON.stringify(toRawIdStandIn(1))
/** A result of 1 MB: far larger than the ends of an answer that are read. */
const bigResult = `"0x${'ab'.repeat(500_000)}"`

describe('withRawIds', () => {
  it('writes each id back as the client wrote it, in a small answer', () => {
    assert.equal(
      withRawIds(`{"jsonrpc":"2.0","id":${first},"result":"0x1"}`, rawIds),
      `{"jsonrpc":"2.0","id":${rawIds[0]},"result":"0x1"}`,
    )
  })

  it('finds the id of a large answer first or last, whichever order the node wrote', () => {
    const idFirst = Buffer.from(`{"jsonrpc":"2.0","id":${first},"result":${bigResult}}`)
    const idLast = Buffer.from(`{"jsonrpc":"2.0","result":${bigResult},"id":${second}}`)
    const written = withRawIds(serializeBatch([idFirst, idLast]), rawIds)
    assert.ok(written instanceof AnswerParts)
    assert.equal(
      written.toString(),
      `[{"jsonrpc":"2.0","id":${rawIds[0]},"result":${bigResult}},` +
        `{"jsonrpc":"2.0","result":${bigResult},"id":${rawIds[1]}}]`,
    )
    // the large middles are the node's own bytes, not copies
    assert.ok(written.parts.some((part) => part.buffer === idFirst.buffer && part.length > 900_000))
  })

  it('leaves a large answer without stand-ins as it came', () => {
    const answer = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":${bigResult}}`)
    assert.equal(withRawIds(answer, rawIds).toString(), answer.toString())
  })
})
