import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readIdTexts } from './readIdTexts.ts'

describe('readIdTexts', () => {
  it("reads a single call's id as written, blanks and nested ids aside; the last of two wins", () => {
    assert.deepEqual(
      readIdTexts('{"params":[{"id":1}],"id" : 12345678901234567890123 ,"jsonrpc":"2.0","method":"m"}'),
      new Map([[0, '12345678901234567890123']]),
    )
    assert.deepEqual(readIdTexts('{"id":1.50,"x":{"id":2},"id":-0}'), new Map([[0, '-0']]))
    assert.deepEqual(readIdTexts('{"i\\u0064":1e400}'), new Map([[0, '1e400']]))
    assert.deepEqual(readIdTexts('{"id":"12345678901234567890123"}'), new Map())
    assert.deepEqual(readIdTexts('{"method":"id","params":["id",":"]}'), new Map())
  })

  it("reads each batch element's id by its place; arrays and ids of other kinds are no entries", () => {
    assert.deepEqual(
      readIdTexts(' [ {"id":9007199254740993}, [1,"id",2], {"id":"x"}, {"a":{"id":5},"id":-1.0E+2} ]'),
      new Map([
        [0, '9007199254740993'],
        [3, '-1.0E+2'],
      ]),
    )
  })
})
