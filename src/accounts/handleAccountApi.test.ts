import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createAlertAdmin } from '../alerts/createAlertAdmin.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'
import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { createKeyAdmin, type KeyAdmin } from '../auth/keyAdmin.ts'
import { keySettingsSchema } from '../auth/keySettings.ts'
import { plansSchema } from '../config/plansSchema.ts'
import type { AccountApiDeps } from './accountApiTypes.ts'
import { type AccountAdmin, createAccountAdmin } from './createAccountAdmin.ts'
import { createAccountRequestRate } from './createAccountRequestRate.ts'
import { accountSessionMacKey, createAccountSessions } from './createAccountSessions.ts'
import { handleAccountApi } from './handleAccountApi.ts'

const refused = {
  status: 401,
  body: { error: { message: 'account token required: Authorization: Bearer <account token>' } },
  headers: { 'www-authenticate': 'Bearer realm="account"' },
}

describe('handleAccountApi', () => {
  let stores: Stores
  let accounts: AccountAdmin
  let keyAdmin: KeyAdmin
  let nowMs = Date.UTC(2026, 10, 29, 12)
  let flushes = 0
  let token: string
  const deps = (): AccountApiDeps => ({
    accounts,
    alerts: createAlertAdmin({
      alerts: stores.alerts,
      accounts: stores.accounts,
      hashKey: async () => Buffer.alloc(32, 1),
      now: () => nowMs,
    }),
    keyAdmin,
    usage: stores.usage,
    flushUsage: async () => {
      flushes++
    },
    now: () => nowMs,
    tokenFailures: createAuthFailureLimiter({ burst: 2, perMinute: 6, now: () => nowMs }),
    requestRate: createAccountRequestRate(() => nowMs),
    requestLog: { store: stores.requestLog, flush: async () => {}, days: 7, sampleRate: 0.01 },
    sessions: createAccountSessions({
      macKey: accountSessionMacKey(Buffer.alloc(32, 1)),
      ttlMs: 3_600_000,
      now: () => nowMs,
    }),
  })
  const get = (api: AccountApiDeps, url: string, authorization?: string, address = '192.0.2.1') =>
    handleAccountApi(api, {
      method: 'GET',
      url,
      authorization,
      clientAddress: address,
      body: '',
      headers: {},
    })

  before(async () => {
    stores = await createStores({ sqlite: ':memory:' }, { exclusive: false })
    const plans = plansSchema.parse({})
    accounts = createAccountAdmin({ ...stores, plans: () => plans, now: () => nowMs })
    keyAdmin = createKeyAdmin(stores.keys, plans)
    await stores.keys.createKey({
      account: { create: { name: 'acme', plan: 'core', dailyCredits: null, creditsPerSecond: null } },
      name: 'web',
      settings: keySettingsSchema.parse({}),
      maxKeysPerAccount: () => null,
    })
    token = await accounts.makeToken('acme')
  })
  after(() => stores?.close())

  it('a request without a token is refused and not counted: the right token still works after many', async () => {
    const api = deps()
    for (let i = 0; i < 5; i++) assert.deepEqual(await get(api, '/account/api/keys'), refused)
    assert.deepEqual(await get(api, '/account/api/keys', 'Basic abc'), refused)
    assert.equal((await get(api, '/account/api/keys', `Bearer ${token}`)).status, 200)
  })

  it('wrong tokens are counted per address: past the burst, 429 even for the right one, until one comes back', async () => {
    const api = deps()
    assert.deepEqual(await get(api, '/account/api/keys', 'Bearer nope'), refused)
    assert.deepEqual(await get(api, '/account/api/keys', `Bearer tga_${'f'.repeat(32)}`), refused)
    const locked = await get(api, '/account/api/keys', `Bearer ${token}`)
    assert.equal(locked.status, 429)
    assert.equal(locked.headers?.['retry-after'], '10')
    // another address is not locked out
    assert.equal((await get(api, '/account/api/keys', `Bearer ${token}`, '198.51.100.7')).status, 200)
    nowMs += 10_000
    assert.equal((await get(api, '/account/api/keys', `Bearer ${token}`)).status, 200)
  })

  it('routes: usage (days checked before usage is written), keys, account; others 404, other methods 405', async () => {
    const api = deps()
    const auth = `Bearer ${token}`
    const before = flushes
    assert.deepEqual(await get(api, '/account/api/usage?days=3651', auth), {
      status: 400,
      body: { error: { message: 'days: expected a whole number from 1 to 3650' } },
      headers: {},
    })
    assert.equal(flushes, before)
    assert.deepEqual(await get(api, '/account/api/usage/', auth), {
      status: 200,
      body: { account: 'acme', days: 7, usage: [] },
    })
    assert.equal(flushes, before + 1)
    const account = await get(api, '/account/api/account', auth)
    assert.deepEqual(account.body, {
      account: 'acme',
      plan: 'core',
      dailyCredits: 3_000_000,
      creditsPerSecond: 500,
      creditsUsedToday: 0,
      resetsAt: new Date(Date.UTC(2026, 10, 30)).toISOString(),
    })
    for (const url of ['/account/api', '/account/api/', '/account/api/keys/web', '/account/api/usagex']) {
      assert.equal((await get(api, url, auth)).status, 404, url)
    }
    const posted = await handleAccountApi(api, {
      method: 'POST',
      url: '/account/api/usage',
      authorization: auth,
      clientAddress: undefined,
      body: '{}',
      headers: {},
    })
    assert.equal(posted.status, 405)
  })

  it("a signed-in account's requests beyond its rate are refused 429 until the bucket refills; other accounts are not slowed", async () => {
    const api = { ...deps(), requestRate: createAccountRequestRate(() => nowMs, 3) }
    const auth = `Bearer ${token}`
    for (let i = 0; i < 3; i++) assert.equal((await get(api, '/account/api/keys', auth)).status, 200)
    const refused = await get(api, '/account/api/keys', auth)
    assert.equal(refused.status, 429)
    assert.deepEqual(refused.body, {
      error: { message: 'too many account API requests: slow down (Retry-After says when)' },
    })
    assert.equal(refused.headers?.['retry-after'], '1')
    const acme = (await stores.keys.getAccount('acme')) ?? assert.fail()
    assert.equal(api.requestRate.take(acme.id + 1), 0)
    nowMs += 400
    assert.equal((await get(api, '/account/api/keys', auth)).status, 200)
  })

  describe('the session', () => {
    const call = (
      api: AccountApiDeps,
      method: string,
      url: string,
      options: {
        cookie?: string
        csrf?: string | undefined
        body?: string
        address?: string
        origin?: string
      } = {},
    ) =>
      handleAccountApi(api, {
        method,
        url,
        authorization: undefined,
        clientAddress: options.address ?? '192.0.2.9',
        body: options.body ?? '',
        headers: {
          ...(options.cookie === undefined
            ? {}
            : { cookie: `other=1; tollgate_account_session=${options.cookie}` }),
          ...(options.csrf === undefined ? {} : { 'x-csrf-token': options.csrf }),
          ...(options.origin === undefined ? {} : { origin: options.origin, host: 'gateway.example:8545' }),
        },
      })
    const cookieOf = (answer: { headers?: Record<string, string | readonly string[]> }) =>
      /^tollgate_account_session=([^;]*)/.exec(String(answer.headers?.['set-cookie'] ?? ''))?.[1] ??
      assert.fail('no cookie')

    it('signs in with the account token: the cookie then reads the account; signing out ends it', async () => {
      const api = deps()
      assert.deepEqual((await call(api, 'GET', '/account/api/session')).body, {
        signedIn: false,
        oidc: false,
      })
      const signedIn = await call(api, 'POST', '/account/api/session', { body: JSON.stringify({ token }) })
      assert.equal(signedIn.status, 200)
      const body = signedIn.body as { signedIn: boolean; account: string; csrfToken: string }
      assert.equal(body.signedIn, true)
      assert.equal(body.account, 'acme')
      assert.match(
        String(signedIn.headers?.['set-cookie'] ?? ''),
        /; Path=\/account; Max-Age=3600; HttpOnly; SameSite=Lax$/,
      )
      const cookie = cookieOf(signedIn)
      assert.deepEqual((await call(api, 'GET', '/account/api/session', { cookie })).body, signedIn.body)
      const keys = await call(api, 'GET', '/account/api/keys', { cookie })
      assert.equal(keys.status, 200)
      assert.equal((keys.body as { account: string }).account, 'acme')
      // without the CSRF token nothing changes, not even the sign-out
      const out = await call(api, 'DELETE', '/account/api/session', { cookie })
      assert.match(
        String(out.headers?.['set-cookie'] ?? ''),
        /^tollgate_account_session=; Path=\/account; Max-Age=0;/,
      )
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie })).status, 200)
      await call(api, 'DELETE', '/account/api/session', { cookie, csrf: body.csrfToken })
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie })).status, 401)
      assert.deepEqual((await call(api, 'GET', '/account/api/session', { cookie })).body, {
        signedIn: false,
        oidc: false,
      })
    })

    it("another site's page cannot sign a browser in (login CSRF); the portal's own page and scripts can", async () => {
      const api = deps()
      const body = JSON.stringify({ token })
      for (const origin of ['http://evil.example', 'null']) {
        const crossSite = await call(api, 'POST', '/account/api/session', { body, origin })
        assert.deepEqual(crossSite.body, { error: { message: 'cross-origin request refused' } })
        assert.equal(crossSite.status, 400)
        assert.equal(crossSite.headers?.['set-cookie'], undefined)
      }
      const sameSite = await call(api, 'POST', '/account/api/session', {
        body,
        origin: 'http://gateway.example:8545',
      })
      assert.equal(sameSite.status, 200)
      assert.equal((await call(api, 'POST', '/account/api/session', { body })).status, 200)
    })

    it('a change signed in by the cookie needs the CSRF token: 403 without it, then on to the resource', async () => {
      const api = deps()
      const signedIn = await call(api, 'POST', '/account/api/session', { body: JSON.stringify({ token }) })
      const cookie = cookieOf(signedIn)
      const { csrfToken } = signedIn.body as { csrfToken: string }
      // a token of the right length in characters but not in bytes is refused like any wrong one
      for (const csrf of [undefined, 'wrong', 'é'.repeat(csrfToken.length)]) {
        assert.deepEqual(await call(api, 'POST', '/account/api/keys', { cookie, csrf, body: '{}' }), {
          status: 403,
          body: { error: { message: 'missing or wrong x-csrf-token for this session: reload the page' } },
          headers: {},
        })
      }
      assert.equal((await call(api, 'POST', '/account/api/keys', { cookie, csrf: csrfToken })).status, 409)
    })

    it('wrong tokens at sign-in are counted with the bearer ones; bodies that are not a token are refused', async () => {
      const api = deps()
      const address = '203.0.113.5'
      assert.equal((await call(api, 'POST', '/account/api/session', { body: 'nope', address })).status, 400)
      assert.equal(
        (await call(api, 'POST', '/account/api/session', { body: '{"token":1}', address })).status,
        400,
      )
      assert.equal((await call(api, 'POST', '/account/api/session', { body: 'null', address })).status, 400)
      for (let i = 0; i < 2; i++) {
        const wrong = await call(api, 'POST', '/account/api/session', { body: '{"token":"tga_x"}', address })
        assert.equal(wrong.status, 401)
        assert.equal(wrong.headers?.['set-cookie'], undefined)
      }
      const locked = await call(api, 'POST', '/account/api/session', {
        body: JSON.stringify({ token }),
        address,
      })
      assert.equal(locked.status, 429)
      assert.equal((await get(api, '/account/api/keys', `Bearer ${token}`, address)).status, 429)
    })

    it('a new or revoked account token ends the sessions signed in before it, not those after', async () => {
      const api = deps()
      const signIn = async () =>
        cookieOf(await call(api, 'POST', '/account/api/session', { body: JSON.stringify({ token }) }))
      const before = await signIn()
      nowMs += 1000
      token = await accounts.makeToken('acme')
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie: before })).status, 401)
      nowMs += 1000
      const after = await signIn()
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie: after })).status, 200)
      nowMs += 1000
      assert.equal(await accounts.revokeToken('acme'), true)
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie: after })).status, 401)
      token = await accounts.makeToken('acme')
    })

    it('a cookie of an account made again under the same name, or a forged one, signs in to nothing', async () => {
      const api = deps()
      const other = createAccountSessions({
        macKey: accountSessionMacKey(Buffer.alloc(32, 2)),
        ttlMs: 3_600_000,
        now: () => nowMs,
      })
      const acme = (await stores.keys.getAccount('acme')) ?? assert.fail()
      const forged = other.signIn(acme).cookie
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie: forged })).status, 401)
      const stale = api.sessions.signIn({ ...acme, id: acme.id + 1000 }).cookie
      assert.equal((await call(api, 'GET', '/account/api/keys', { cookie: stale })).status, 401)
      assert.deepEqual((await call(api, 'GET', '/account/api/session', { cookie: stale })).body, {
        signedIn: false,
        oidc: false,
      })
      assert.equal((await call(api, 'PUT', '/account/api/session')).status, 404)
      assert.equal((await call(api, 'GET', '/account/api/session/x')).status, 404)
    })
  })
})
