import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createDashboardSessions } from './createDashboardSessions.ts'

describe('createDashboardSessions', () => {
  const token = 'admin-token-0123456789abcdef'
  const make = (now: () => number, adminToken = token) =>
    createDashboardSessions({ token: adminToken, ttlMs: 60_000, now })

  it('signs in with the admin token only, and the session lasts its time to live', () => {
    let nowMs = 1_000_000
    const sessions = make(() => nowMs)
    assert.equal(sessions.signIn('wrong'), undefined)
    const signedIn = sessions.signIn(token)
    assert.ok(signedIn)
    assert.deepEqual(sessions.verify(signedIn.cookie), signedIn.session)
    assert.equal(signedIn.session.expiresAtMs, 1_060_000)
    nowMs = 1_059_999
    assert.ok(sessions.verify(signedIn.cookie))
    nowMs = 1_060_000
    assert.equal(sessions.verify(signedIn.cookie), undefined)
  })

  it('refuses altered cookies, and those of another admin token', () => {
    const sessions = make(() => 0)
    const { cookie } = sessions.signIn(token) ?? assert.fail()
    const [expires, nonce, mac] = cookie.split('.') as [string, string, string]
    assert.equal(sessions.verify(`${Number(expires) + 1}.${nonce}.${mac}`), undefined)
    assert.equal(
      sessions.verify(`${expires}.${nonce}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`),
      undefined,
    )
    assert.equal(sessions.verify(undefined), undefined)
    assert.equal(sessions.verify('garbage'), undefined)
    assert.equal(make(() => 0, `${token}-rotated`).verify(cookie), undefined)
    // another instance with the same token accepts it: nothing is stored
    assert.ok(make(() => 0).verify(cookie))
  })

  it('gives each session its own CSRF token; a signed-out session is over', () => {
    const sessions = make(() => 0)
    const first = sessions.signIn(token) ?? assert.fail()
    const second = sessions.signIn(token) ?? assert.fail()
    assert.notEqual(first.session.csrfToken, second.session.csrfToken)
    sessions.signOut(first.cookie)
    assert.equal(sessions.verify(first.cookie), undefined)
    assert.ok(sessions.verify(second.cookie))
  })
})
