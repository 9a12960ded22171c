import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSharesOf } from './createSharesOf.ts'

describe('createSharesOf', () => {
  const sharesOf = createSharesOf(['127.0.0.1', '::1'])

  it("a request's key and its client address, an IPv6 address by its /64", () => {
    assert.deepEqual(sharesOf('abc', '203.0.113.7'), ['key:abc', 'address:203.0.113.7'])
    assert.deepEqual(sharesOf('abc', '::ffff:203.0.113.7'), ['key:abc', 'address:203.0.113.7'])
    assert.deepEqual(sharesOf('abc', '2001:db8:1:2:3:4:5:6'), ['key:abc', 'address:2001:db8:1:2::/64'])
    assert.deepEqual(sharesOf('abc', '2001:db8:1:2::9'), ['key:abc', 'address:2001:db8:1:2::/64'])
  })

  it('an exempt address (a local proxy) and an unknown one share by key alone', () => {
    assert.deepEqual(sharesOf('abc', '127.0.0.1'), ['key:abc'])
    assert.deepEqual(sharesOf('abc', '::ffff:127.0.0.1'), ['key:abc'])
    assert.deepEqual(sharesOf('abc', '::1'), ['key:abc'])
    assert.deepEqual(sharesOf('abc', undefined), ['key:abc'])
  })
})
