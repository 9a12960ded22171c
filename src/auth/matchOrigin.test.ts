import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { matchOrigin } from './matchOrigin.ts'

describe('matchOrigin', () => {
  it('matches exact hosts, with or without a scheme in the entry', () => {
    assert.equal(matchOrigin('example.com', 'https://example.com'), true)
    assert.equal(matchOrigin('example.com', 'http://example.com:3000'), true)
    assert.equal(matchOrigin('https://example.com', 'https://example.com'), true)
    assert.equal(matchOrigin('https://example.com', 'http://example.com'), false)
    assert.equal(matchOrigin('example.com', 'https://app.example.com'), false)
    assert.equal(matchOrigin('example.com', 'https://example.com.evil.org'), false)
  })

  it('`*.` matches any subdomain, not the domain itself', () => {
    assert.equal(matchOrigin('*.example.com', 'https://app.example.com'), true)
    assert.equal(matchOrigin('*.example.com', 'https://a.b.example.com'), true)
    assert.equal(matchOrigin('*.example.com', 'https://example.com'), false)
    assert.equal(matchOrigin('*.example.com', 'https://badexample.com'), false)
    assert.equal(matchOrigin('https://*.example.com', 'http://app.example.com'), false)
  })

  it('a port in the entry must match; junk never matches', () => {
    assert.equal(matchOrigin('localhost:3000', 'http://localhost:3000'), true)
    assert.equal(matchOrigin('localhost:3000', 'http://localhost:3001'), false)
    assert.equal(matchOrigin('example.com', 'null'), false)
    assert.equal(matchOrigin('example.com', ''), false)
  })
})
