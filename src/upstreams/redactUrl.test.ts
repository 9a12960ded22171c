import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { redactUrl } from './redactUrl.ts'

describe('redactUrl', () => {
  it('keeps scheme, host and port; hides credentials, paths and queries', () => {
    assert.equal(redactUrl('http://127.0.0.1:8545'), 'http://127.0.0.1:8545')
    assert.equal(redactUrl('https://mainnet.infura.io/v3/0123456789abcdef'), 'https://mainnet.infura.io/…')
    assert.equal(redactUrl('https://user:pass@node.example:8443/'), 'https://…@node.example:8443')
    assert.equal(redactUrl('https://node.example/?apikey=secret'), 'https://…@node.example')
    assert.equal(redactUrl('not a url'), '(invalid url)')
  })
})
