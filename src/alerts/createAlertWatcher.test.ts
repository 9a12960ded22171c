import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import type { Stores } from '../app/stores.ts'
import type { ApiKey } from '../auth/apiKey.ts'
import { keySettingsSchema } from '../auth/keySettings.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import type { MeterSubject } from '../metering/meterTypes.ts'
import { accountSubject, keySubject } from '../metering/usageStore.ts'
import type { AlertPayload } from './alertPayload.ts'
import { type AlertWatcher, createAlertWatcher } from './createAlertWatcher.ts'

const dayMs = 86_400_000

for (const backend of storeBackends) {
  describe(`alert events on ${backend.name}`, () => {
    let database: TestDatabase
    /** Two processes on one database: two gateways, or one before and after a restart. */
    let stores: [Stores, Stores]
    let nowMs = Date.UTC(2026, 10, 29, 23, 0)
    const day = '2026-11-29'
    let web: ApiKey
    let plain: ApiKey
    let lone: ApiKey
    let subjects: MeterSubject[]
    const made = [0, 0]
    let watchers: [AlertWatcher, AlertWatcher]

    const subjectOf = (key: ApiKey, keyDailyCredits?: number): MeterSubject => ({
      accountId: key.account.id,
      keyId: key.id,
      accountCounter: accountSubject(key.account.id),
      keyCounter: keySubject(key.id),
      accountDailyCredits: 1_000,
      accountCreditsPerSecond: 10,
      keyDailyCredits,
      keyCreditsPerSecond: undefined,
    })
    /** Credits written by one process, as its meter's flush writes them, then looked at by its watcher. */
    const spend = async (process: 0 | 1, key: ApiKey, credits: number, onDay = day) => {
      const daily = [
        { subject: accountSubject(key.account.id), day: onDay, credits },
        { subject: keySubject(key.id), day: onDay, credits },
      ]
      await stores[process].usage.addUsage({ daily, hourly: [] })
      watchers[process].usageWritten(daily)
      await watchers[process].idle()
    }
    const events = async (key: ApiKey) =>
      (await stores[0].alerts.listEvents(key.account.id, 100))
        .map((row) => JSON.parse(row.payload) as AlertPayload)
        .map(({ key: name, event, threshold, creditsUsed, creditLimit, day: onDay }) => ({
          key: name,
          event,
          threshold,
          creditsUsed,
          creditLimit,
          day: onDay,
        }))
        .sort((a, b) =>
          `${a.day}${a.key}${a.event}${a.threshold}`.localeCompare(
            `${b.day}${b.key}${b.event}${b.threshold}`,
          ),
        )

    before(async () => {
      database = await backend.createDatabase()
      stores = [await database.open(), await database.open()]
      const settings = keySettingsSchema.parse({})
      const create = (account: string, name: string, dailyCredits = 0) =>
        stores[0].keys.createKey({
          account: { create: { name: account, plan: 'custom', dailyCredits: 1_000, creditsPerSecond: 10 } },
          name,
          settings: { ...settings, dailyCredits },
          maxKeysPerAccount: () => null,
        })
      web = await create('acme', 'web', 200)
      plain = await stores[0].keys.createKey({
        account: { existing: 'acme' },
        name: 'backend',
        settings,
        maxKeysPerAccount: () => null,
      })
      lone = await create('globex', 'app')
      subjects = [subjectOf(web, 200), subjectOf(plain), subjectOf(lone)]
      watchers = [0, 1].map((process) =>
        createAlertWatcher({
          store: (stores[process] as Stores).alerts,
          usage: (stores[process] as Stores).usage,
          subjects: () => subjects,
          accountKeys: (id) => (stores[process] as Stores).keys.listAccountKeys(id),
          now: () => nowMs,
          onEvent: () => {
            made[process] = (made[process] ?? 0) + 1
          },
          onError: (err) => {
            throw err
          },
        }),
      ) as [AlertWatcher, AlertWatcher]
      await stores[0].alerts.putSettings({
        accountId: web.account.id,
        webhookUrl: 'https://hooks.example/acme',
        thresholds: [50, 75, 90, 100],
        format: 'json',
        sealedSecret: 'sealed',
        nowMs,
      })
    })
    after(() => database?.remove())

    it('several thresholds passed by one write are one event each, once, whichever process writes next', async () => {
      await spend(0, plain, 400)
      assert.deepEqual(await events(plain), [])
      await spend(1, plain, 400)
      assert.deepEqual(await events(plain), [
        { key: null, event: 'credits', threshold: 50, creditsUsed: 800, creditLimit: 1_000, day },
        { key: null, event: 'credits', threshold: 75, creditsUsed: 800, creditLimit: 1_000, day },
      ])
      assert.deepEqual(made, [0, 2])
      // the other process has seen none of them: the database says they exist
      await spend(0, plain, 1)
      await spend(1, plain, 1)
      assert.equal((await events(plain)).length, 2)
      assert.deepEqual(made, [0, 2])
    })

    it("a key's own daily limit has events of its own, named by the key", async () => {
      await spend(0, web, 160)
      const keyEvents = (await events(web)).filter((event) => event.key === 'web')
      assert.deepEqual(keyEvents, [
        { key: 'web', event: 'credits', threshold: 50, creditsUsed: 160, creditLimit: 200, day },
        { key: 'web', event: 'credits', threshold: 75, creditsUsed: 160, creditLimit: 200, day },
      ])
      // the account passed 90% with it (802 + 160)
      assert.ok((await events(web)).some((event) => event.key === null && event.threshold === 90))
    })

    it("a key's first per-second refusal of the day is one event; daily refusals are not", async () => {
      const subject = subjects[1] as MeterSubject
      for (const watcher of watchers) {
        watcher.refused(subject, new RateLimitError('planCreditsPerSecond', 100))
        watcher.refused(subject, new RateLimitError('keyCreditsPerSecond', 100))
        watcher.refused(subject, new RateLimitError('keyCreditsPerDay', 100))
        await watcher.idle()
      }
      const rate = (await events(plain)).filter((event) => event.event === 'rate_limited')
      assert.deepEqual(rate, [
        { key: 'backend', event: 'rate_limited', threshold: null, creditsUsed: 962, creditLimit: 1_000, day },
      ])
    })

    it('an account without alerts has no events', async () => {
      await spend(0, lone, 1_000)
      watchers[0].refused(subjects[2] as MeterSubject, new RateLimitError('planCreditsPerSecond', 100))
      await watchers[0].idle()
      assert.deepEqual(await stores[0].alerts.listEvents(lone.account.id, 10), [])
    })

    it('a new UTC day starts over: the same thresholds are events again', async () => {
      nowMs += 2 * 3_600_000
      const next = '2026-11-30'
      await spend(1, plain, 500, next)
      watchers[0].refused(subjects[1] as MeterSubject, new RateLimitError('planCreditsPerSecond', 100))
      await watchers[0].idle()
      const today = (await events(plain)).filter((event) => event.day === next)
      assert.deepEqual(
        today.map(({ key, event, threshold }) => ({ key, event, threshold })),
        [
          { key: 'backend', event: 'rate_limited', threshold: null },
          { key: null, event: 'credits', threshold: 50 },
        ],
      )
      // and yesterday's late usage (a flush across midnight) still counts on yesterday
      await spend(0, plain, 100, day)
      const yesterday = (await events(plain)).filter((event) => event.day === day && event.key === null)
      assert.deepEqual(
        yesterday.map((event) => event.threshold).sort((a, b) => (a ?? 0) - (b ?? 0)),
        [50, 75, 90, 100],
      )
      assert.ok(nowMs - Date.UTC(2026, 10, 29) < 2 * dayMs)
    })
  })
}
