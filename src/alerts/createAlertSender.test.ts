import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { until } from '../../test/helpers/until.ts'
import { createStores } from '../app/createStores.ts'
import type { Stores } from '../app/stores.ts'
import { keySettingsSchema } from '../auth/keySettings.ts'
import { sealSecret } from './alertSecret.ts'
import { createAlertSender } from './createAlertSender.ts'

describe('createAlertSender', () => {
  let stores: Stores
  let accountId: number
  const nowMs = Date.UTC(2026, 10, 29, 12)

  before(async () => {
    stores = await createStores({ sqlite: ':memory:' }, { exclusive: false })
    const created = await stores.keys.createKey({
      account: { create: { name: 'acme', plan: 'core', dailyCredits: null, creditsPerSecond: null } },
      name: 'web',
      settings: keySettingsSchema.parse({}),
      maxKeysPerAccount: () => null,
    })
    accountId = created.account.id
  })
  after(() => stores?.close())

  it('an event whose secret cannot be opened is recorded as failed, on the schedule, never sent unsigned', async () => {
    // sealed under another key than the one the sender opens it with (the hash key changed)
    await stores.alerts.putSettings({
      accountId,
      webhookUrl: 'http://192.0.2.1/hook',
      thresholds: [50],
      format: 'json',
      sealedSecret: sealSecret('s'.repeat(32), Buffer.alloc(32, 1)),
      nowMs,
    })
    const event = { accountId, keyId: 0, kind: 'credits' as const, threshold: 50, day: '2026-11-29' }
    await stores.alerts.addEvent({ ...event, id: 'e1', payload: '{"id":"e1"}', createdAtMs: nowMs })
    const errors: unknown[] = []
    const sender = createAlertSender(
      {
        retry: { baseMs: 1_000, maxMs: 10_000, forMs: 86_400_000 },
        timeoutMs: 1_000,
        concurrency: 1,
        pollMs: 60_000,
        privateAddresses: false,
        keepMs: 86_400_000,
      },
      {
        store: stores.alerts,
        hashKey: async () => Buffer.alloc(32, 2),
        now: () => nowMs,
        random: () => 0.5,
        onError: (err) => errors.push(err),
      },
    )
    try {
      await until(
        async () => (await stores.alerts.listEvents(accountId, 10))[0]?.attempts === 1,
        'the attempt',
      )
      const [row] = await stores.alerts.listEvents(accountId, 10)
      assert.equal(row?.lastStatus, 'cannot sign: the signing secret cannot be opened (make a new one)')
      assert.equal(row?.deliveredAtMs, null)
      assert.ok((row?.nextAttemptAtMs ?? 0) > nowMs, 'due again later, as any failed attempt')
      assert.equal(errors.length, 1)
    } finally {
      await sender.close()
    }
  })
})
