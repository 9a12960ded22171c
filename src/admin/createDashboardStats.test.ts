import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HourlyUsage } from '../metering/usageStore.ts'
import { createDashboardStats } from './createDashboardStats.ts'

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
  it('counts usage per network and minute over the last hour, and answers by status', () => {
    const minute = 60_000
    let nowMs = 1_000 * minute
    const stats = createDashboardStats({ now: () => nowMs })
    stats.recordUsage({ daily: [], hourly: [row('mainnet', 120, 600), row('base', 6, 30)] })
    stats.noteAnswer('mainnet', 200)
    stats.noteAnswer('base', 429)
    nowMs += minute + 30_000 // half a minute into the next minute
    stats.recordUsage({ daily: [], hourly: [row('mainnet', 15, 75)] })
    stats.noteAnswer('mainnet', 200)

    const snapshot = stats.snapshot([])
    assert.equal(snapshot.minutes.length, 60)
    assert.equal(snapshot.minutes.at(-1), 1_001 * minute)
    assert.deepEqual(snapshot.statuses, { 200: 2, 429: 1 })

    // the figures per network come with the networks; here read through a minimal one
    const network = {
      name: 'mainnet',
      chainId: 1,
      pool: { head: () => 10n, members: [] },
      partners: undefined,
      heads: { finalized: () => 8n },
      cache: undefined,
    } as unknown as Parameters<typeof stats.snapshot>[0][number]
    const [mainnet] = stats.snapshot([network]).networks
    assert.ok(mainnet)
    assert.deepEqual(mainnet.callsPerSecond.slice(-2), [2, 0.5]) // 120 in a minute; 15 in the half passed
    assert.deepEqual(mainnet.creditsPerMinute.slice(-2), [600, 75])
    assert.equal(mainnet.head, 10)
    assert.equal(mainnet.finalized, 8)
    assert.deepEqual(mainnet.statuses, { 200: 2 })

    nowMs += 60 * minute // an hour later the old minutes are gone
    stats.noteAnswer('(none)', 500)
    assert.deepEqual(stats.snapshot([]).statuses, { 500: 1 })
  })
})
