import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, it } from 'node:test'
import { createClientAddressOf } from './createClientAddressOf.ts'

const request = (remoteAddress: string, forwardedFor?: string | string[]) =>
  ({
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage

describe('createClientAddressOf', () => {
  it('without trusted proxies: the connection, whatever the header says', () => {
    const of = createClientAddressOf([])
    assert.equal(of(request('203.0.113.7', '198.51.100.1')), '203.0.113.7')
  })

  it('behind a trusted proxy: the nearest untrusted hop, not what the client wrote further left', () => {
    const of = createClientAddressOf(['10.0.0.0/8', '192.0.2.10'])
    // the client claims 1.1.1.1; the load balancer appended the client's real address
    assert.equal(of(request('10.1.2.3', '1.1.1.1, 198.51.100.9')), '198.51.100.9')
    // two proxies: the outer one (192.0.2.10) is trusted too
    assert.equal(of(request('10.1.2.3', '1.1.1.1, 198.51.100.9, 192.0.2.10')), '198.51.100.9')
    assert.equal(of(request('10.1.2.3', ['1.1.1.1', '198.51.100.9'])), '198.51.100.9')
    // an IPv4-mapped connection address is the same proxy
    assert.equal(of(request('::ffff:10.1.2.3', '198.51.100.9')), '198.51.100.9')
  })

  it('an untrusted connection is believed alone; a bad or missing header leaves the last good hop', () => {
    const of = createClientAddressOf(['10.0.0.0/8', 'fd00::/8'])
    assert.equal(of(request('203.0.113.7', '198.51.100.9')), '203.0.113.7')
    assert.equal(of(request('10.1.2.3')), '10.1.2.3')
    assert.equal(of(request('10.1.2.3', 'not-an-address')), '10.1.2.3')
    assert.equal(of(request('10.1.2.3', '198.51.100.9, junk, 10.9.9.9')), '10.9.9.9')
    assert.equal(of(request('fd00::1', '2001:db8::5')), '2001:db8::5')
    // every hop trusted: the farthest one
    assert.equal(of(request('10.1.2.3', '10.7.7.7')), '10.7.7.7')
  })
})
