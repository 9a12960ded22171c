import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { corsHeaders, preflightHeaders } from './corsHeaders.ts'

const open = { enabled: true, origins: [], maxAgeSeconds: 600 }

describe('corsHeaders', () => {
  it('allows the calling page by name and exposes the credit and retry headers', () => {
    const headers = corsHeaders('https://dapp.example', open)
    assert.equal(headers?.['access-control-allow-origin'], 'https://dapp.example')
    assert.equal(headers?.vary, 'Origin')
    const exposed = headers?.['access-control-expose-headers']?.toLowerCase().split(/,\s*/) ?? []
    for (const name of ['x-credits-charged', 'x-credits-remaining', 'x-ratelimit-reset', 'retry-after']) {
      assert.ok(exposed.includes(name), name)
    }
  })

  it('adds nothing for requests without an Origin, or with CORS off', () => {
    assert.equal(corsHeaders(undefined, open), undefined)
    assert.equal(corsHeaders('https://dapp.example', { ...open, enabled: false }), undefined)
  })

  it('keeps to pinned origins, exact or by subdomain wildcard', () => {
    const pinned = { ...open, origins: ['https://app.example', '*.trusted.example'] }
    assert.ok(corsHeaders('https://app.example', pinned))
    assert.ok(corsHeaders('https://a.trusted.example', pinned))
    assert.equal(corsHeaders('http://app.example', pinned), undefined, 'the scheme must match')
    assert.equal(corsHeaders('https://evil.example', pinned), undefined)
  })
})

describe('preflightHeaders', () => {
  it('names the methods, the headers tollgate reads and the ones asked for, and the max age', () => {
    const headers = preflightHeaders('https://dapp.example', 'Content-Type, X-Trace', open)
    assert.equal(headers?.['access-control-allow-origin'], 'https://dapp.example')
    assert.deepEqual(headers?.['access-control-allow-methods']?.split(', ').sort(), [
      'GET',
      'OPTIONS',
      'POST',
    ])
    assert.deepEqual(headers?.['access-control-allow-headers']?.split(', ').sort(), [
      'authorization',
      'content-type',
      'enable-failover',
      'traceparent',
      'tracestate',
      'x-tollgate-route',
      'x-trace',
    ])
    assert.equal(headers?.['access-control-max-age'], '600')
  })

  it('allows nothing for an origin config does not allow', () => {
    assert.equal(
      preflightHeaders('https://evil.example', undefined, { ...open, origins: ['https://a.b'] }),
      undefined,
    )
  })
})
