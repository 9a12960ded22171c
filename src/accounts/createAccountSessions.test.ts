import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Account } from '../auth/apiKey.ts'
import {
  accountSessionCookieHeader,
  accountSessionMacKey,
  createAccountSessions,
} from './createAccountSessions.ts'

describe('createAccountSessions', () => {
  const hashKey = Buffer.alloc(32, 7)
  const account: Account = {
    id: 42,
    name: 'acme ünïcode',
    plan: 'core',
    dailyCredits: null,
    creditsPerSecond: null,
    createdAt: new Date(0),
  }
  const make = (now: () => number, key = hashKey) =>
    createAccountSessions({ macKey: accountSessionMacKey(key), ttlMs: 60_000, now })

  it('names the account, and lasts its time to live', () => {
    let nowMs = 1_000_000
    const sessions = make(() => nowMs)
    const signedIn = sessions.signIn(account)
    assert.deepEqual(sessions.verify(signedIn.cookie), signedIn.session)
    assert.equal(signedIn.session.accountId, 42)
    assert.equal(signedIn.session.accountName, 'acme ünïcode')
    assert.equal(signedIn.session.expiresAtMs, 1_060_000)
    nowMs = 1_059_999
    assert.ok(sessions.verify(signedIn.cookie))
    nowMs = 1_060_000
    assert.equal(sessions.verify(signedIn.cookie), undefined)
  })

  it('refuses altered cookies and those of another database; another instance of this one accepts them', () => {
    const sessions = make(() => 0)
    const { cookie } = sessions.signIn(account)
    const [id, name, expires, nonce, mac] = cookie.split('.') as [string, string, string, string, string]
    const forged = (parts: string[]) => sessions.verify(parts.join('.'))
    assert.equal(forged([String(Number(id) + 1), name, expires, nonce, mac]), undefined)
    assert.equal(forged([id, Buffer.from('other').toString('base64url'), expires, nonce, mac]), undefined)
    assert.equal(forged([id, name, String(Number(expires) + 1), nonce, mac]), undefined)
    assert.equal(
      forged([id, name, expires, nonce, `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`]),
      undefined,
    )
    assert.equal(sessions.verify(undefined), undefined)
    assert.equal(sessions.verify('garbage'), undefined)
    assert.equal(sessions.verify(`${cookie}${'x'.repeat(1000)}`), undefined)
    assert.equal(make(() => 0, Buffer.alloc(32, 8)).verify(cookie), undefined)
    assert.ok(make(() => 0).verify(cookie))
  })

  it('gives each session its own CSRF token; a signed-out session is over, an unsigned cookie is not remembered', () => {
    const sessions = make(() => 0)
    const first = sessions.signIn(account)
    const second = sessions.signIn(account)
    assert.notEqual(first.session.csrfToken, second.session.csrfToken)
    sessions.signOut(first.cookie)
    sessions.signOut('1.YQ.5.aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')
    assert.equal(sessions.verify(first.cookie), undefined)
    assert.ok(sessions.verify(second.cookie))
  })

  it('the cookie is HttpOnly, SameSite=Lax, for /account only, Secure over TLS', () => {
    assert.equal(
      accountSessionCookieHeader('v', 60, false),
      'tollgate_account_session=v; Path=/account; Max-Age=60; HttpOnly; SameSite=Lax',
    )
    assert.equal(
      accountSessionCookieHeader('', 0, true),
      'tollgate_account_session=; Path=/account; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
    )
  })
})
