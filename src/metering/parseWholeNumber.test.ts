import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AdminRequestError } from '../errors/adminErrors.ts'
import { parseWholeNumber } from './parseWholeNumber.ts'

const bounds = { min: 1, max: 3650, fallback: 7 }

describe('parseWholeNumber', () => {
  it('reads whole numbers within the bounds; absent is the fallback', () => {
    assert.equal(parseWholeNumber('days', '1', bounds), 1)
    assert.equal(parseWholeNumber('days', '3650', bounds), 3650)
    assert.equal(parseWholeNumber('days', '030', bounds), 30)
    assert.equal(parseWholeNumber('days', null, bounds), 7)
    assert.equal(parseWholeNumber('days', undefined, bounds), 7)
  })

  it('refuses anything else with a 400 naming the bounds', () => {
    for (const text of [
      '0',
      '3651',
      '99999999999',
      '1'.repeat(400),
      '-1',
      '1.5',
      '1e3',
      ' 1',
      '0x10',
      '',
      'abc',
    ]) {
      assert.throws(
        () => parseWholeNumber('days', text, bounds),
        (err: unknown) =>
          err instanceof AdminRequestError &&
          err.httpStatus === 400 &&
          err.message === 'days: expected a whole number from 1 to 3650',
        text,
      )
    }
  })
})
