import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { oidcStateMacKey, openOidcState, sealOidcState } from './oidcStateCookie.ts'

const macKey = oidcStateMacKey(randomBytes(32))
const part = () => randomBytes(32).toString('base64url')
const pending = { state: part(), nonce: part(), codeVerifier: part(), expiresAtMs: 1_000_600_000 }

describe('the OIDC state cookie', () => {
  it('opens to what was sealed while it has not expired; not from its expiry on', () => {
    const value = sealOidcState(pending, macKey)
    assert.deepEqual(openOidcState(value, macKey, 1_000_000_000), pending)
    assert.equal(openOidcState(value, macKey, pending.expiresAtMs), undefined)
  })

  it('a changed character anywhere, another key, or a longer expiry is refused', () => {
    const value = sealOidcState(pending, macKey)
    for (let at = 0; at < value.length; at++) {
      if (value[at] === '.') continue
      const changed = `${value.slice(0, at)}${value[at] === 'A' ? 'B' : 'A'}${value.slice(at + 1)}`
      assert.equal(openOidcState(changed, macKey, 1_000_000_000), undefined, `character ${at}`)
    }
    assert.equal(openOidcState(value, oidcStateMacKey(randomBytes(32)), 1_000_000_000), undefined)
    const later = value.replace(`.${pending.expiresAtMs}.`, `.${pending.expiresAtMs * 2}.`)
    assert.equal(openOidcState(later, macKey, 1_000_000_000), undefined)
  })

  it('a MAC under the database key itself, not the key derived for this cookie, does not pass', () => {
    const hashKey = randomBytes(32)
    const value = sealOidcState(pending, hashKey)
    assert.equal(openOidcState(value, oidcStateMacKey(hashKey), 1_000_000_000), undefined)
  })

  it('no cookie, garbage and over-long values are refused without error', () => {
    for (const value of [
      undefined,
      '',
      'x',
      '.....',
      'a'.repeat(10_000),
      `${sealOidcState(pending, macKey)}.x`,
    ])
      assert.equal(openOidcState(value, macKey, 0), undefined)
  })
})
