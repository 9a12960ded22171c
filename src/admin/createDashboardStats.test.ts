import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { createTestPrefix, startRedisServer } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import type { HourlyUsage } from '../metering/usageStore.ts'
import type { Network } from '../networks/createNetwork.ts'
import { createDashboardStats } from './createDashboardStats.ts'
import { createSharedDashboardFigures } from './createSharedDashboardFigures.ts'

const row = (network: string, calls: number, credits: number): HourlyUsage => ({
  keyId: 1,
  network,
  method: 'eth_call',
  hour: '2026-11-22T13',
  calls,
  credits,
  failoverCalls: 0,
})

describe('createDashboardStats', () => {
  it('counts usage per network and minute over the last hour, and answers by status', async () => {
    const minute = 60_000
    let nowMs = 1_000 * minute
    const stats = createDashboardStats({ now: () => nowMs })
    stats.recordUsage({ daily: [], hourly: [row('mainnet', 120, 600), row('base', 6, 30)] })
    stats.noteAnswer('mainnet', 200)
    stats.noteAnswer('base', 429)
    nowMs += minute + 30_000 // half a minute into the next minute
    stats.recordUsage({ daily: [], hourly: [row('mainnet', 15, 75)] })
    stats.noteAnswer('mainnet', 200)

    const snapshot = await stats.snapshot([])
    assert.equal(snapshot.minutes.length, 60)
    assert.equal(snapshot.minutes.at(-1), 1_001 * minute)
    assert.deepEqual(snapshot.statuses, { 200: 2, 429: 1 })

    // the figures per network come with the networks; here read through a minimal one
    const network = {
      name: 'mainnet',
      chainId: 1,
      pool: { members: [] },
      partners: undefined,
      head: { latest: () => ({ number: 10n, gasLimit: 30_000_000n }), finalized: () => 8n },
      cache: undefined,
    } as unknown as Network
    const [mainnet] = (await stats.snapshot([network])).networks
    assert.ok(mainnet)
    assert.deepEqual(mainnet.callsPerSecond.slice(-2), [2, 0.5]) // 120 in a minute; 15 in the half passed
    assert.deepEqual(mainnet.creditsPerMinute.slice(-2), [600, 75])
    assert.equal(mainnet.head, 10)
    assert.equal(mainnet.finalized, 8)
    assert.deepEqual(mainnet.statuses, { 200: 2 })

    nowMs += 60 * minute // an hour later the old minutes are gone
    stats.noteAnswer('(none)', 500)
    assert.deepEqual((await stats.snapshot([])).statuses, { 500: 1 })
  })

  it('follows a network by name: one a reload rebuilt (cache and upstreams new) goes on from its counts', async () => {
    const stats = createDashboardStats({ now: () => 0 })
    const member = (requests: number, failures: number) => ({
      upstream: { label: 'anvil' },
      head: 10n,
      latencyMs: 1,
      errorRate: 0,
      breaker: { state: 'closed' },
      requests,
      failures,
    })
    const built = (cacheStats: { hits: number; misses: number }, members: ReturnType<typeof member>[]) =>
      ({
        name: 'mainnet',
        chainId: 1,
        pool: { members },
        partners: undefined,
        head: { latest: () => ({ number: 10n, gasLimit: 30_000_000n }), finalized: () => 8n },
        cache: { stats: { ...cacheStats, entries: 1 } },
      }) as unknown as Network
    const shown = async (network: Network) => {
      const [mainnet] = (await stats.snapshot([network])).networks
      return {
        cache: mainnet?.cache,
        upstreams: mainnet?.upstreams.map((each) => [each.requests, each.failures]),
      }
    }
    const before = built({ hits: 3, misses: 1 }, [member(6, 1), member(2, 0)])
    assert.deepEqual(await shown(before), {
      cache: { hits: 3, misses: 1, hitRatio: 0.75, entries: 1 },
      upstreams: [
        [6, 1],
        [2, 0],
      ],
    })
    // the old network's last calls end as the reload swaps it: counted too
    const oldStats = (before.cache as { stats: { hits: number } }).stats
    oldStats.hits = 4
    const rebuilt = built({ hits: 1, misses: 2 }, [member(3, 0), member(1, 1)])
    assert.deepEqual(await shown(rebuilt), {
      cache: { hits: 5, misses: 3, hitRatio: 0.625, entries: 1 },
      upstreams: [
        [9, 1],
        [3, 1],
      ],
    })
  })

  describe('shared through Redis', () => {
    const prefix = createTestPrefix()
    after(() => prefix.remove())
    const minute = 60_000
    const nowMs = 2_000 * minute + 45_000
    /** A network with a cache whose counts the test sets. */
    const withCache = (stats: { hits: number; misses: number }) =>
      ({
        name: 'mainnet',
        chainId: 1,
        pool: { members: [] },
        partners: undefined,
        head: { latest: () => ({ number: 10n, gasLimit: 30_000_000n }), finalized: () => undefined },
        cache: { stats: { ...stats, entries: 3 } },
      }) as unknown as Network
    const sharedStats = async (keyPrefix = prefix.keyPrefix, flushMs = 3_600_000) =>
      createDashboardStats({
        now: () => nowMs,
        shared: {
          figures: await createSharedDashboardFigures({
            url: prefix.url,
            keyPrefix,
          }),
          flushMs,
          onError: (err) => assert.fail(String(err)),
        },
      })

    it("shows every instance's counts once they are sent, and only those", async () => {
      const first = await sharedStats()
      const second = await sharedStats()
      const firstNetwork = withCache({ hits: 3, misses: 1 })
      first.follow(() => [firstNetwork])
      second.follow(() => [withCache({ hits: 0, misses: 0 })])
      first.recordUsage({ daily: [], hourly: [row('mainnet', 90, 450)] })
      first.noteAnswer('mainnet', 200)
      first.noteAnswer('mainnet', 429)
      second.recordUsage({ daily: [], hourly: [row('mainnet', 45, 225)] })
      second.noteAnswer('mainnet', 200)
      await first.close() // sends what it counted

      const shown = async (stats: Awaited<ReturnType<typeof sharedStats>>, network: Network) => {
        const snapshot = await stats.snapshot([network])
        const [mainnet] = snapshot.networks
        assert.ok(mainnet)
        return {
          shared: snapshot.shared,
          statuses: snapshot.statuses,
          calls: mainnet.callsPerSecond.at(-1),
          credits: mainnet.creditsPerMinute.at(-1),
          cache: mainnet.cache,
        }
      }
      // the second has not sent its own yet: both instances show the first's alone
      const firstOnly = {
        shared: true,
        statuses: { 200: 1, 429: 1 },
        calls: 2, // 90 calls in the 45 seconds of this minute
        credits: 450,
        cache: { hits: 3, misses: 1, hitRatio: 0.75, entries: 3 },
      }
      assert.deepEqual(await shown(second, withCache({ hits: 0, misses: 0 })), firstOnly)

      const third = await sharedStats()
      assert.deepEqual(await shown(third, firstNetwork), firstOnly)
      await second.close()
      assert.deepEqual(await shown(third, firstNetwork), {
        ...firstOnly,
        statuses: { 200: 2, 429: 1 },
        calls: 3,
        credits: 675,
      })
      await third.close()
    })

    it('sends the cache counts of a network a reload rebuilt on from where the one before was', async () => {
      const own = createTestPrefix()
      const reader = await sharedStats(own.keyPrefix)
      const hitsShown = async (network: Network) =>
        (await reader.snapshot([network])).networks[0]?.cache ?? { hits: -1, misses: -1 }
      try {
        const before = withCache({ hits: 3, misses: 1 })
        let network = before
        const stats = await sharedStats(own.keyPrefix, 50)
        stats.follow(() => [network])
        await until(async () => (await hitsShown(network)).hits === 3, 'the first counts sent')
        // counted after that send, before the reload's swap; then the rebuilt network, its cache new
        ;(before.cache as { stats: { hits: number } }).stats.hits = 5
        network = withCache({ hits: 1, misses: 0 })
        await stats.close() // sends the rest
        const { hits, misses } = await hitsShown(network)
        assert.deepEqual({ hits, misses }, { hits: 6, misses: 1 })
      } finally {
        await reader.close()
        await own.remove()
      }
    })

    it("Redis down: says the figures are unavailable, still shows the instance's state, and sends the counts once it is back", async () => {
      const server = await startRedisServer()
      const onServer = async () =>
        createDashboardStats({
          now: () => nowMs,
          shared: {
            figures: await createSharedDashboardFigures({ url: server.url, keyPrefix: prefix.keyPrefix }),
            flushMs: 3_600_000,
            onError: () => {},
          },
        })
      const stats = await onServer()
      try {
        stats.recordUsage({ daily: [], hourly: [row('mainnet', 60, 300)] })
        await server.stop()
        const network = withCache({ hits: 0, misses: 0 })
        const down = await stats.snapshot([network])
        assert.equal(down.unavailable, true)
        assert.equal(down.networks[0]?.head, 10)
        assert.deepEqual(down.networks[0]?.creditsPerMinute.at(-1), 0)

        await server.start()
        await until(async () => (await stats.snapshot([network])).unavailable === false, 'Redis to be back')
        await stats.close() // sends the counts kept while Redis was away
        const reader = await onServer()
        try {
          assert.equal((await reader.snapshot([network])).networks[0]?.creditsPerMinute.at(-1), 300)
        } finally {
          await reader.close()
        }
      } finally {
        await stats.close()
        await server.stop()
      }
    })
  })
})
