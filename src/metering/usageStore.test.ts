import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import type { HourlyUsage, UsageStore } from './usageStore.ts'

function hourly(over: Partial<HourlyUsage>): HourlyUsage {
  return {
    keyId: 1,
    network: 'devnet',
    method: 'eth_call',
    hour: '2026-11-22T13',
    calls: 1,
    credits: 80,
    failoverCalls: 0,
    ...over,
  }
}

for (const backend of storeBackends) {
  describe(`usage store on ${backend.name}`, () => {
    let database: TestDatabase
    let store: UsageStore
    /** The same database as another gateway sees it. */
    let other: UsageStore
    before(async () => {
      database = await backend.createDatabase()
      store = (await database.open()).usage
      other = (await database.open()).usage
    })
    after(() => database?.remove())

    it('adds daily credits per subject and day; reads one day back', async () => {
      await store.addUsage({
        daily: [
          { subject: 'account:1', day: '2026-11-21', credits: 5 },
          { subject: 'account:1', day: '2026-11-22', credits: 100 },
          { subject: 'key:1', day: '2026-11-22', credits: 100 },
        ],
        hourly: [],
      })
      await other.addUsage({
        daily: [
          { subject: 'account:1', day: '2026-11-22', credits: 20 },
          // the same row twice in one delta: both count
          { subject: 'key:2', day: '2026-11-22', credits: 1 },
          { subject: 'key:2', day: '2026-11-22', credits: 2 },
        ],
        hourly: [],
      })
      assert.deepEqual(
        await other.loadDailyUsage('2026-11-22'),
        new Map([
          ['account:1', 120],
          ['key:1', 100],
          ['key:2', 3],
        ]),
      )
      assert.deepEqual(await store.loadDailyUsage('2026-11-21'), new Map([['account:1', 5]]))
      assert.deepEqual(await store.loadDailyUsage('2026-11-20'), new Map())
      // some subjects only: those asked for that spent on that day
      assert.deepEqual(
        await store.loadSubjectsUsage('2026-11-22', ['key:2', 'account:1', 'account:7']),
        new Map([
          ['key:2', 3],
          ['account:1', 120],
        ]),
      )
      assert.deepEqual(await store.loadSubjectsUsage('2026-11-21', ['key:2']), new Map())
      assert.deepEqual(await store.loadSubjectsUsage('2026-11-22', []), new Map())
    })

    it("keeps each bank instance's share of a day, read with the day's figure for a seed; drops the shares of days before yesterday", async () => {
      const day = '2026-06-10'
      const credits = (subject: string, amount: number, on = day) => ({ subject, day: on, credits: amount })
      await store.addUsage({
        daily: [credits('account:40', 100), credits('key:40', 100)],
        hourly: [],
        instance: 'A',
      })
      await store.addUsage({ daily: [credits('account:40', 50)], hourly: [], instance: 'A' })
      await other.addUsage({ daily: [credits('account:40', 30)], hourly: [], instance: 'B' })
      assert.equal(
        await other.addBatch('share-batch', { daily: [credits('account:40', 5)], hourly: [], instance: 'B' }),
        true,
      )
      // written without an instance (a spool's batch): in the day's figure, in no share
      await store.addUsage({ daily: [credits('account:40', 7)], hourly: [] })
      assert.deepEqual(
        await other.loadDaySeeds(day, ['account:40', 'key:40', 'key:41']),
        new Map([
          ['account:40', { credits: 192, instances: { A: 150, B: 35 } }],
          ['key:40', { credits: 100, instances: { A: 100 } }],
        ]),
      )
      assert.deepEqual(await store.loadDaySeeds(day, []), new Map())
      // a day two days on written: the shares of the days before the day before it go
      await store.addUsage({ daily: [credits('account:40', 1, '2026-06-12')], hourly: [], instance: 'A' })
      assert.deepEqual(
        await other.loadDaySeeds(day, ['account:40']),
        new Map([['account:40', { credits: 192, instances: {} }]]),
      )
      assert.deepEqual(
        await other.loadDaySeeds('2026-06-12', ['account:40']),
        new Map([['account:40', { credits: 1, instances: { A: 1 } }]]),
      )
    })

    it('keeps credits past 2^32 exactly', async () => {
      const big = 2 ** 40 + 3
      await store.addUsage({ daily: [{ subject: 'account:9', day: '2030-01-01', credits: big }], hourly: [] })
      await store.addUsage({ daily: [{ subject: 'account:9', day: '2030-01-01', credits: big }], hourly: [] })
      assert.equal((await other.loadDailyUsage('2030-01-01')).get('account:9'), 2 * big)
    })

    it('sums the history per day, key, network and method, oldest first; hour by hour too', async () => {
      await store.addUsage({
        daily: [],
        hourly: [
          hourly({ keyId: 10, hour: '2026-10-01T00', calls: 1, credits: 80 }),
          hourly({ keyId: 10, hour: '2026-10-01T23', calls: 2, credits: 160, failoverCalls: 1 }),
          hourly({ keyId: 10, hour: '2026-10-02T05', method: '(invalid)', calls: 1, credits: 5 }),
          hourly({ keyId: 11, hour: '2026-10-01T10', network: 'mainnet', calls: 4, credits: 4 }),
          hourly({ keyId: 10, hour: '2026-09-30T23', calls: 7, credits: 7 }),
        ],
      })
      await other.addUsage({
        daily: [],
        hourly: [hourly({ keyId: 10, hour: '2026-10-01T00', calls: 1, credits: 80 })],
      })
      const rows = (await other.queryUsage({ fromDay: '2026-10-01' })).filter((row) => row.day < '2026-11')
      assert.deepEqual(rows, [
        {
          day: '2026-10-01',
          keyId: 10,
          network: 'devnet',
          method: 'eth_call',
          calls: 4,
          credits: 320,
          failoverCalls: 1,
        },
        {
          day: '2026-10-01',
          keyId: 11,
          network: 'mainnet',
          method: 'eth_call',
          calls: 4,
          credits: 4,
          failoverCalls: 0,
        },
        {
          day: '2026-10-02',
          keyId: 10,
          network: 'devnet',
          method: '(invalid)',
          calls: 1,
          credits: 5,
          failoverCalls: 0,
        },
      ])
      const forKey = (await store.queryUsage({ keyId: 11, fromDay: '2026-09-01' })).map((row) => row.day)
      assert.deepEqual(forKey, ['2026-10-01'])
      const hours = (await store.queryHourlyUsage({ keyId: 10, fromHour: '2026-10-01T23' })).filter(
        (row) => row.hour < '2026-11',
      )
      assert.deepEqual(hours, [
        hourly({ keyId: 10, hour: '2026-10-01T23', calls: 2, credits: 160, failoverCalls: 1 }),
        hourly({ keyId: 10, hour: '2026-10-02T05', method: '(invalid)', calls: 1, credits: 5 }),
      ])
    })

    it('a delta is stored all or nothing', async () => {
      const bad = hourly({ keyId: 20, hour: '2026-08-01T00', network: null as unknown as string })
      await assert.rejects(
        store.addUsage({
          daily: [{ subject: 'key:20', day: '2026-08-01', credits: 80 }],
          hourly: [hourly({ keyId: 20, hour: '2026-08-01T00' }), bad],
        }),
      )
      assert.deepEqual(await other.loadDailyUsage('2026-08-01'), new Map())
      assert.deepEqual(await other.queryUsage({ keyId: 20, fromDay: '2026-01-01' }), [])
    })

    it('instances flushing at once: every delta counts, exactly', async () => {
      const flushes = Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? store : other).addUsage({
          daily: [
            { subject: 'account:30', day: '2026-07-01', credits: 80 },
            { subject: `key:${30 + (i % 3)}`, day: '2026-07-01', credits: 80 },
          ],
          hourly: [
            hourly({ keyId: 30 + (i % 3), hour: '2026-07-01T10', method: 'eth_call', credits: 80 }),
            hourly({ keyId: 30, hour: '2026-07-01T10', method: 'eth_getLogs', credits: 255, calls: 3 }),
          ],
        }),
      )
      await Promise.all(flushes)
      const day = await store.loadDailyUsage('2026-07-01')
      assert.equal(day.get('account:30'), 40 * 80)
      assert.equal((day.get('key:30') ?? 0) + (day.get('key:31') ?? 0) + (day.get('key:32') ?? 0), 40 * 80)
      const rows = await other.queryUsage({ fromDay: '2026-07-01' })
      const july = rows.filter((row) => row.day === '2026-07-01')
      assert.equal(
        july.reduce((sum, row) => sum + row.credits, 0),
        40 * 80 + 40 * 255,
      )
      assert.equal(
        july.reduce((sum, row) => sum + row.calls, 0),
        40 + 40 * 3,
      )
    })
  })
}
