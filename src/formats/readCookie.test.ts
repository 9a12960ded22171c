import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readCookie } from './readCookie.ts'

describe('readCookie', () => {
  it('finds a cookie by its exact name among others, in one header or several', () => {
    assert.equal(readCookie('a=1; session=xyz; b=2', 'session'), 'xyz')
    assert.equal(readCookie(['a=1', ' session = xyz '], 'session'), 'xyz')
    assert.equal(readCookie('my_session=1; session_x=2', 'session'), undefined)
    assert.equal(readCookie('session=', 'session'), '')
    assert.equal(readCookie('novalue; session=a=b', 'session'), 'a=b')
    assert.equal(readCookie(undefined, 'session'), undefined)
  })
})
