import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createAlertAdmin } from '../alerts/createAlertAdmin.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'
import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { keySettingsSchema } from '../auth/keySettings.ts'
import { plansSchema } from '../config/plansSchema.ts'
import { type AccountAdmin, createAccountAdmin } from './createAccountAdmin.ts'
import { type AccountApiDeps, handleAccountApi } from './handleAccountApi.ts'

const refused = {
  status: 401,
  body: { error: { message: 'account token required: Authorization: Bearer <account token>' } },
  headers: { 'www-authenticate': 'Bearer realm="account"' },
}

describe('handleAccountApi', () => {
  let stores: Stores
  let accounts: AccountAdmin
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
    usage: stores.usage,
    flushUsage: async () => {
      flushes++
    },
    now: () => nowMs,
    tokenFailures: createAuthFailureLimiter({ burst: 2, perMinute: 6, now: () => nowMs }),
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
      url: '/account/api/keys',
      authorization: auth,
      clientAddress: undefined,
      body: '{}',
      headers: {},
    })
    assert.equal(posted.status, 405)
  })
})
