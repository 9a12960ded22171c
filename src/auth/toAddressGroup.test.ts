import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toAddressGroup } from './toAddressGroup.ts'

describe('toAddressGroup', () => {
  it('IPv4 addresses count one by one, mapped or not', () => {
    assert.equal(toAddressGroup('127.0.0.1'), '127.0.0.1')
    assert.equal(toAddressGroup('::ffff:127.0.0.2'), '127.0.0.2')
    assert.equal(toAddressGroup('::FFFF:10.1.2.3'), '10.1.2.3')
    assert.notEqual(toAddressGroup('127.0.0.1'), toAddressGroup('127.0.0.2'))
  })

  it('IPv6 addresses count by their /64, however they are written', () => {
    const group = '2001:db8:0:1::/64'
    assert.equal(toAddressGroup('2001:db8:0:1::1'), group)
    assert.equal(toAddressGroup('2001:0db8:0000:0001:ffff:ffff:ffff:ffff'), group)
    assert.equal(toAddressGroup('2001:db8:0:1:a:b:c:d'), group)
    assert.equal(toAddressGroup('2001:db8::1:0:0:0:7'), group, ':: in the middle')
    assert.equal(toAddressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64', 'zone id dropped')
    assert.notEqual(toAddressGroup('2001:db8:0:2::1'), group)
    assert.equal(toAddressGroup('::1'), '0:0:0:0::/64')
  })

  it('a socket without an address counts as one unknown client', () => {
    assert.equal(toAddressGroup(undefined), 'unknown')
  })
})
