import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import type { RequestLogQuery, RequestLogRow, RequestLogStore } from './requestLogStore.ts'

const t0 = Date.UTC(2026, 10, 22, 12)

function row(over: Partial<RequestLogRow>): RequestLogRow {
  return {
    timeMs: t0,
    accountId: 1,
    keyId: 1,
    network: 'devnet',
    method: 'eth_call',
    outcome: 'ok',
    status: 200,
    code: null,
    error: null,
    reason: null,
    credits: 80,
    durationMs: 5,
    cacheHit: false,
    upstream: 'alpha',
    clientAddress: '203.0.113.0/24',
    userAgent: 'test',
    params: null,
    answer: null,
    ...over,
  }
}

const everything: RequestLogQuery = {
  accountId: undefined,
  keyIds: undefined,
  network: undefined,
  method: undefined,
  outcome: undefined,
  fromMs: undefined,
  toMs: undefined,
  before: undefined,
  limit: 1000,
}

for (const backend of storeBackends) {
  describe(`request log store on ${backend.name}`, () => {
    let database: TestDatabase
    let store: RequestLogStore
    /** The same database as another gateway sees it. */
    let other: RequestLogStore
    before(async () => {
      database = await backend.createDatabase()
      store = (await database.open()).requestLog
      other = (await database.open()).requestLog
    })
    after(() => database?.remove())

    it('reads one account alone, newest first, with each filter, and pages with a cursor', async () => {
      await store.add([
        row({ timeMs: t0, method: 'eth_call' }),
        row({ timeMs: t0 + 1, method: 'eth_chainId', cacheHit: true }),
        row({
          timeMs: t0 + 2,
          outcome: 'refused',
          status: 429,
          code: 429,
          error: 'RateLimitError',
          reason: 'slow down',
        }),
        row({ timeMs: t0 + 2, keyId: 2, network: 'sepolia' }),
      ])
      await other.add([row({ timeMs: t0 + 3, accountId: 2, keyId: 3 })])
      const mine = await store.read({ ...everything, accountId: 1 })
      assert.deepEqual(
        mine.map((each) => [each.timeMs - t0, each.keyId, each.method]),
        [
          [2, 2, 'eth_call'],
          [2, 1, 'eth_call'],
          [1, 1, 'eth_chainId'],
          [0, 1, 'eth_call'],
        ],
      )
      assert.equal(mine[2]?.cacheHit, true)
      assert.equal(mine[1]?.code, 429)
      assert.equal((await other.read({ ...everything, accountId: 2 })).length, 1)
      assert.equal((await store.read(everything)).length, 5)
      const count = async (query: Partial<RequestLogQuery>) =>
        (await store.read({ ...everything, accountId: 1, ...query })).length
      assert.equal(await count({ keyIds: [2] }), 1)
      assert.equal(await count({ keyIds: [] }), 0)
      assert.equal(await count({ network: 'sepolia' }), 1)
      assert.equal(await count({ method: 'eth_chainId' }), 1)
      assert.equal(await count({ outcome: 'refused' }), 1)
      assert.equal(await count({ fromMs: t0 + 1 }), 3)
      assert.equal(await count({ toMs: t0 + 1 }), 1)
      // pages of two: the cursor is the last row's time and id
      const first = await store.read({ ...everything, accountId: 1, limit: 2 })
      const last = first.at(-1)
      assert.ok(last)
      const second = await store.read({
        ...everything,
        accountId: 1,
        before: { timeMs: last.timeMs, id: last.id },
      })
      assert.deepEqual(
        [...first, ...second].map((each) => each.id),
        mine.map((each) => each.id),
      )
    })

    it('summarizes failures exactly and the latency of the successful calls logged', async () => {
      const summary = await store.summarize(1, t0, 10)
      assert.deepEqual(summary.failures, [
        {
          outcome: 'refused',
          status: 429,
          code: 429,
          error: 'RateLimitError',
          reason: 'slow down',
          calls: 1,
        },
      ])
      await store.add([1, 2, 3, 4, 6, 7, 8, 9, 10].map((durationMs) => row({ accountId: 9, durationMs })))
      // nearest rank: the 5th and the 9th of 9 (and account 1's, 5 ms each, are not counted)
      assert.deepEqual((await other.summarize(9, t0, 10)).latency, { sampledCalls: 9, p50Ms: 6, p99Ms: 10 })
      assert.deepEqual((await other.summarize(8, t0, 10)).latency, {
        sampledCalls: 0,
        p50Ms: null,
        p99Ms: null,
      })
    })

    it('prunes rows older than the cut, and each account beyond its rows, oldest first', async () => {
      await store.add([
        row({ accountId: 5, timeMs: t0 - 10 }),
        ...[1, 2, 3, 4, 5].map((n) => row({ accountId: 6, timeMs: t0 + n, method: `m${n}` })),
      ])
      const deleted = await store.prune(t0, 3)
      assert.ok(deleted >= 3)
      assert.equal((await store.read({ ...everything, accountId: 5 })).length, 0)
      assert.deepEqual(
        (await store.read({ ...everything, accountId: 6 })).map((each) => each.method),
        ['m5', 'm4', 'm3'],
      )
      // every account holds at most 3 now; pruning again (as another instance would) deletes nothing
      const counts = new Map<number, number>()
      for (const each of await store.read(everything))
        counts.set(each.accountId, (counts.get(each.accountId) ?? 0) + 1)
      assert.ok([...counts.values()].every((n) => n <= 3))
      assert.equal(await other.prune(t0, 3), 0)
    })

    it('prunes an account far beyond its rows in several batches, keeping exactly its newest', async () => {
      const many = Array.from({ length: 4_503 }, (_, n) =>
        row({ accountId: 10, timeMs: t0 + 100 + n, method: `m${n}` }),
      )
      await store.add(many)
      assert.equal(await store.prune(t0, 3), 4_500)
      assert.deepEqual(
        (await store.read({ ...everything, accountId: 10 })).map((each) => each.method),
        ['m4502', 'm4501', 'm4500'],
      )
    })
  })
}
