import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { createAlertAdmin } from '../alerts/createAlertAdmin.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'
import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { createKeyAdmin, type KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyView } from '../auth/keyView.ts'
import { plansSchema } from '../config/plansSchema.ts'
import type { AccountApiDeps } from './accountApiTypes.ts'
import { createAccountAdmin } from './createAccountAdmin.ts'
import { createAccountRequestRate } from './createAccountRequestRate.ts'
import { accountSessionMacKey, createAccountSessions } from './createAccountSessions.ts'
import { handleAccountApi } from './handleAccountApi.ts'

const noKey = { status: 404, body: { error: { message: 'no active key with that value' } }, headers: {} }

describe('the account API: keys', () => {
  let stores: Stores
  let keyAdmin: KeyAdmin
  let api: AccountApiDeps
  let token: string
  let rivalKey: string
  const nowMs = Date.UTC(2026, 10, 29, 12)

  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await handleAccountApi(api, {
      method,
      url: `/account/api/keys${path}`,
      authorization: `Bearer ${token}`,
      clientAddress: '192.0.2.1',
      body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
      headers: {},
    })
    return { ...answer, headers: answer.headers ?? {} }
  }

  before(async () => {
    stores = await createStores({ sqlite: ':memory:' }, { exclusive: false })
    const plans = plansSchema.parse({})
    keyAdmin = createKeyAdmin(stores.keys, plans)
    const accounts = createAccountAdmin({ ...stores, plans: () => plans, now: () => nowMs })
    await keyAdmin.create({ account: 'acme', plan: 'developer', name: 'first' })
    rivalKey = (await keyAdmin.create({ account: 'rival', plan: 'developer', name: 'theirs', secret: true }))
      .key.key
    token = await accounts.makeToken('acme')
    api = {
      accounts,
      alerts: createAlertAdmin({
        alerts: stores.alerts,
        accounts: stores.accounts,
        hashKey: async () => Buffer.alloc(32, 1),
        now: () => nowMs,
      }),
      keyAdmin,
      usage: stores.usage,
      flushUsage: async () => {},
      now: () => nowMs,
      tokenFailures: createAuthFailureLimiter({ burst: 20, perMinute: 20, now: () => nowMs }),
      requestRate: createAccountRequestRate(() => nowMs, 1_000),
      sessions: createAccountSessions({
        macKey: accountSessionMacKey(Buffer.alloc(32)),
        ttlMs: 1000,
        now: () => nowMs,
      }),
      requestLog: { store: stores.requestLog, flush: async () => {}, days: 7, sampleRate: 0.01 },
    }
  })
  after(() => stores?.close())

  it('creates keys in the account, with a secret shown once, up to the plan’s keys per account', async () => {
    const made = await call('POST', '', { name: 'backend', secret: true })
    assert.equal(made.status, 201)
    const view = made.body as KeyView & { secret: string }
    assert.equal(view.name, 'backend')
    assert.equal(view.account, 'acme')
    assert.equal(view.hasSecret, true)
    assert.match(view.secret, /^[0-9a-f]{32}$/)
    const listed = (await call('GET', '')).body as { account: string; keys: KeyView[] }
    assert.deepEqual(
      listed.keys.map((key) => key.name),
      ['first', 'backend'],
    )
    assert.ok(!JSON.stringify(listed).includes(view.secret))
    // the account and plan are not the key holder's to choose
    const elsewhere = await call('POST', '', { name: 'x', account: 'rival' })
    assert.equal(elsewhere.status, 400)
    assert.match(JSON.stringify(elsewhere.body), /Unrecognized key/)
    for (let i = listed.keys.length; i < 5; i++)
      assert.equal((await call('POST', '', { name: `k${i}` })).status, 201)
    assert.deepEqual(await call('POST', '', { name: 'sixth' }), {
      status: 409,
      body: {
        error: { message: "account 'acme' already has 5 key(s), the most its plan (developer) allows" },
      },
      headers: {},
    })
    assert.equal((await call('POST', '', 'nope')).status, 400)
  })

  it('rotates a secret, sets allowlists and required credentials, lowers limits, revokes', async () => {
    const { key } = await ownKey('backend')
    const rotated = await call('POST', `/${key}/rotate-secret`)
    assert.equal(rotated.status, 200)
    assert.match((rotated.body as { secret: string }).secret, /^[0-9a-f]{32}$/)

    const added = await call('POST', `/${key}/allowlists/origins`, { entries: ['https://app.example.com'] })
    assert.deepEqual((added.body as { origins: string[] }).origins, ['https://app.example.com'])
    assert.equal((await call('POST', `/${key}/allowlists/methods`, { entries: ['eth_nope'] })).status, 400)
    assert.equal((await call('POST', `/${key}/allowlists/colours`, { entries: ['red'] })).status, 404)
    const removed = await call('DELETE', `/${key}/allowlists/origins`, {
      entries: ['https://app.example.com'],
    })
    assert.deepEqual((removed.body as { origins: string[] }).origins, [])

    const required = await call('PATCH', `/${key}`, { requireSecret: true, dailyCredits: 1000 })
    assert.equal((required.body as KeyView).requireSecret, true)
    assert.equal((required.body as KeyView).dailyCredits, 1000)
    assert.equal((await call('PATCH', `/${key}`, { dailyCredits: 999_999_999 })).status, 400)
    assert.equal((await call('PATCH', `/${key}`, { failover: true })).status, 400)
    assert.deepEqual((await call('PATCH', `/${key}`, { requireJwt: true })).body, {
      error: { message: 'a key can require a secret or a JWT, not both' },
    })

    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const jwt = await call('POST', `/${key}/jwt-keys`, { kid: 'k1', publicKey: pem })
    assert.deepEqual(jwt.body, { required: false, audience: null, publicKeys: [{ kid: 'k1', alg: 'ES256' }] })
    const switched = await call('PATCH', `/${key}`, {
      requireSecret: false,
      requireJwt: true,
      jwtAudience: 'app',
    })
    assert.deepEqual((switched.body as KeyView).jwt.required, true)
    assert.equal((await call('DELETE', `/${key}/jwt-keys/k1`)).status, 400)

    assert.deepEqual((await call('DELETE', `/${key}`)).body, { key, status: 'revoked' })
    assert.deepEqual(await call('GET', `/${key}`), noKey)
    assert.deepEqual(await call('POST', `/${key}/rotate-secret`), noKey)
    assert.equal((await call('GET', `/${key}/bogus`)).status, 404)
  })

  it('another account’s key is answered exactly as a missing one, and is left as it was', async () => {
    const missing = 'f'.repeat(32)
    const before = await keyAdmin.show(rivalKey)
    const attempts: [string, string, unknown?][] = [
      ['GET', ''],
      ['PATCH', '', { requireSecret: true }],
      ['DELETE', ''],
      ['POST', '/rotate-secret'],
      ['GET', '/allowlists'],
      ['POST', '/allowlists/origins', { entries: ['example.com'] }],
      ['POST', '/allowlists/colours', { entries: ['red'] }],
      ['DELETE', '/allowlists/origins', { entries: ['example.com'] }],
      ['POST', '/jwt-keys', { kid: 'k', publicKey: 'x' }],
      ['DELETE', '/jwt-keys/k'],
      ['GET', '/nothing'],
    ]
    for (const [method, sub, body] of attempts) {
      const theirs = await call(method, `/${rivalKey}${sub}`, body)
      assert.deepEqual(theirs, noKey, `${method} ${sub}`)
      assert.deepEqual(await call(method, `/${missing}${sub}`, body), theirs, `${method} ${sub}`)
    }
    assert.deepEqual(await keyAdmin.show(rivalKey), before)
    const listed = (await call('GET', '')).body as { keys: KeyView[] }
    assert.ok(listed.keys.every((key) => key.account === 'acme' && key.key !== rivalKey))
  })

  async function ownKey(name: string): Promise<KeyView> {
    const listed = (await call('GET', '')).body as { keys: KeyView[] }
    return listed.keys.find((key) => key.name === name) ?? assert.fail(`no key ${name}`)
  }
})
