import assert from 'node:assert/strict'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { describe, it } from 'node:test'
import { generateAlertSecret, openSecret, sealSecret } from './alertSecret.ts'
import { signatureHeader } from './signWebhook.ts'

/** A receiver's check, as docs/api.md shows it (kept the same: a change there changes it here). */
function verify(secret: string, header: string, body: string, nowSeconds: number): boolean {
  const { t, v1 } = Object.fromEntries(header.split(',').map((part) => part.split('=')))
  if (!t || !v1 || Math.abs(nowSeconds - Number(t)) > 300) return false
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest()
  const given = Buffer.from(v1, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

describe('webhook signatures', () => {
  const secret = generateAlertSecret()
  const body = '{"id":"e1","event":"credits","threshold":50}'

  it('is t=<unix seconds>,v1=<64 hex characters> of "<t>.<body>"', () => {
    const header = signatureHeader(secret, body, 1_767_225_600)
    assert.match(header, /^t=1767225600,v1=[0-9a-f]{64}$/)
    const hmac = createHmac('sha256', secret).update(`1767225600.${body}`).digest('hex')
    assert.equal(header, `t=1767225600,v1=${hmac}`)
  })

  it("verifies with the receiver's few lines; another body, secret or an old time does not", () => {
    const header = signatureHeader(secret, body, 1_000_000)
    assert.equal(verify(secret, header, body, 1_000_010), true)
    assert.equal(verify(secret, header, `${body} `, 1_000_010), false)
    assert.equal(verify(generateAlertSecret(), header, body, 1_000_010), false)
    assert.equal(verify(secret, header, body, 1_000_000 + 301), false)
    assert.equal(verify(secret, 'v1=00', body, 1_000_000), false)
  })

  it('the secret is tgw_ and 64 hex characters, sealed so that only the same hash key opens it', () => {
    assert.match(secret, /^tgw_[0-9a-f]{64}$/)
    const key = Buffer.alloc(32, 7)
    const sealed = sealSecret(secret, key)
    assert.match(sealed, /^aes256gcm\$/)
    assert.ok(!sealed.includes(secret.slice(4)))
    assert.equal(openSecret(sealed, key), secret)
    assert.notEqual(sealSecret(secret, key), sealed, 'a new IV each time')
    assert.throws(() => openSecret(sealed, Buffer.alloc(32, 8)))
    assert.throws(() => openSecret('plain', key))
  })
})
