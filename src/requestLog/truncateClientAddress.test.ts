import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { truncateClientAddress } from './truncateClientAddress.ts'

describe('truncateClientAddress', () => {
  it('cuts IPv4 to its /24 and IPv6 to its /48; a mapped IPv4 as IPv4', () => {
    assert.equal(truncateClientAddress('203.0.113.77'), '203.0.113.0/24')
    assert.equal(truncateClientAddress('::ffff:198.51.100.9'), '198.51.100.0/24')
    assert.equal(truncateClientAddress('2001:db8:abcd:12::1'), '2001:db8:abcd::/48')
    assert.equal(truncateClientAddress('2001:db8::1'), '2001:db8:0::/48')
    assert.equal(truncateClientAddress('::1'), '0:0:0::/48')
    assert.equal(truncateClientAddress('fe80::1%eth0'), 'fe80:0:0::/48')
  })

  it('keeps nothing of what is not an address', () => {
    assert.equal(truncateClientAddress(undefined), null)
    assert.equal(truncateClientAddress(''), null)
    assert.equal(truncateClientAddress('not-an-address'), 'unknown')
    assert.equal(truncateClientAddress('1.2.3'), 'unknown')
    assert.equal(truncateClientAddress('2001:zz::1'), 'unknown')
    assert.equal(truncateClientAddress('1:2:3:4:5:6:7:8:9'), 'unknown')
  })
})
