import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { JwtExpiredError, KeyRevokedError } from '../errors/socketErrors.ts'
import type { KeyRequest, KeyRequestDeps } from './authorizeKeyRequest.ts'
import { createSocketAccess, type SocketAccessResult } from './createSocketAccess.ts'

const entry = { apiKey: { id: 1, key: 'k' } } as KeyEntry
const request = { key: 'k' } as KeyRequest

/** Deps whose registry holds `entry` while `active()` says so; nothing else is reached while it is unchanged. */
function depsWith(active: () => boolean): KeyRequestDeps {
  return { keys: { findActiveKey: () => (active() ? entry : undefined) } } as unknown as KeyRequestDeps
}

async function refusal(pending: Promise<SocketAccessResult>): Promise<unknown> {
  const result = await pending
  return result.ok ? undefined : result.refusal
}

describe('createSocketAccess: the token the socket was opened with', () => {
  it('answers with the grant until the token expires, then refuses with JwtExpiredError for good', async () => {
    let nowMs = 0
    const access = createSocketAccess(
      depsWith(() => true),
      request,
      { key: entry, guard: undefined, failover: false },
      { expiresMs: 1_000, now: () => nowMs },
    )
    nowMs = 999
    assert.equal(await refusal(access.current()), undefined)
    nowMs = 1_000
    assert.ok((await refusal(access.current())) instanceof JwtExpiredError)
    nowMs = 0
    assert.ok((await refusal(access.current())) instanceof JwtExpiredError, 'an ended socket stays ended')
  })

  it('without a token nothing expires; a revoked key still ends it', async () => {
    let active = true
    const access = createSocketAccess(
      depsWith(() => active),
      request,
      { key: entry, guard: undefined, failover: false },
      { expiresMs: undefined, now: () => Number.MAX_SAFE_INTEGER },
    )
    assert.equal(await refusal(access.current()), undefined)
    active = false
    assert.ok((await refusal(access.current())) instanceof KeyRevokedError)
  })
})
