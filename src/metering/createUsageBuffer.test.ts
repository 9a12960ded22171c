import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createUsageBuffer } from './createUsageBuffer.ts'
import type { HourlyUsage, UsageDelta, UsageStore } from './usageStore.ts'

/** A store that keeps what it is given, and refuses writes while `failing`. */
function recordingStore() {
  const written: UsageDelta[] = []
  const state = { failing: false }
  const store = {
    async addUsage(delta: UsageDelta) {
      if (state.failing) throw new Error('store away')
      written.push(delta)
    },
  } as unknown as UsageStore
  return { store, written, state }
}

const byIdentity = (a: HourlyUsage, b: HourlyUsage) =>
  `${a.hour}|${a.keyId}|${a.network}|${a.method}`.localeCompare(
    `${b.hour}|${b.keyId}|${b.network}|${b.method}`,
  )

describe('createUsageBuffer', () => {
  it('sums calls per hour, key, network and method, and credits per subject and day', async () => {
    const { store, written } = recordingStore()
    const buffer = createUsageBuffer(store)
    const call = { keyId: 1, network: 'mainnet', method: 'eth_call', hour: '2026-11-22T10', credits: 80 }
    buffer.addCall({ ...call, failover: false })
    buffer.addCall({ ...call, failover: true })
    buffer.addCall({ ...call, method: 'eth_blockNumber', credits: 80, failover: false })
    buffer.addCall({ ...call, network: 'base', failover: false })
    buffer.addCall({ ...call, keyId: 2, failover: false })
    buffer.addCall({ ...call, hour: '2026-11-22T11', failover: false })
    buffer.addCredits('account:1', '2026-11-22', 80)
    buffer.addCredits('account:1', '2026-11-22', 160)
    buffer.addCredits('key:1', '2026-11-22', 240)
    buffer.addCredits('account:1', '2026-11-23', 5)

    const daily = await buffer.flush()
    assert.deepEqual(
      [...daily].sort((a, b) => `${a.day}${a.subject}`.localeCompare(`${b.day}${b.subject}`)),
      [
        { subject: 'account:1', day: '2026-11-22', credits: 240 },
        { subject: 'key:1', day: '2026-11-22', credits: 240 },
        { subject: 'account:1', day: '2026-11-23', credits: 5 },
      ],
    )
    assert.equal(written.length, 1)
    const row = (overrides: Partial<HourlyUsage>): HourlyUsage => ({
      ...call,
      calls: 1,
      failoverCalls: 0,
      ...overrides,
    })
    assert.deepEqual(
      [...(written[0]?.hourly ?? [])].sort(byIdentity),
      [
        row({ calls: 2, credits: 160, failoverCalls: 1 }),
        row({ method: 'eth_blockNumber' }),
        row({ network: 'base' }),
        row({ keyId: 2 }),
        row({ hour: '2026-11-22T11' }),
      ].sort(byIdentity),
    )
    assert.equal(buffer.flushedCredits('account:1', '2026-11-22'), 240)
    assert.equal(buffer.flushedCredits('account:1', '2026-11-23'), 5)
    assert.equal(buffer.flushedCredits('key:2', '2026-11-22'), 0)
    // nothing pending: nothing written
    assert.deepEqual(await buffer.flush(), [])
    assert.equal(written.length, 1)
  })

  it('keeps what a failed write held and adds it to what came since', async () => {
    const { store, written, state } = recordingStore()
    const buffer = createUsageBuffer(store)
    const call = { keyId: 7, network: 'mainnet', method: 'eth_call', hour: '2026-11-22T10', failover: false }
    buffer.addCall({ ...call, credits: 80 })
    buffer.addCredits('key:7', '2026-11-22', 80)
    state.failing = true
    await assert.rejects(buffer.flush(), /store away/)
    assert.equal(buffer.flushedCredits('key:7', '2026-11-22'), 0)

    buffer.addCall({ ...call, credits: 80, failover: true })
    buffer.addCall({ ...call, method: 'eth_getLogs', credits: 255 })
    buffer.addCredits('key:7', '2026-11-22', 335)
    state.failing = false
    await buffer.flush()
    assert.equal(written.length, 1)
    assert.deepEqual(written[0]?.daily, [{ subject: 'key:7', day: '2026-11-22', credits: 415 }])
    const row = { keyId: 7, network: 'mainnet', hour: '2026-11-22T10' }
    assert.deepEqual([...(written[0]?.hourly ?? [])].sort(byIdentity), [
      { ...row, method: 'eth_call', calls: 2, credits: 160, failoverCalls: 1 },
      { ...row, method: 'eth_getLogs', calls: 1, credits: 255, failoverCalls: 0 },
    ])
    assert.equal(buffer.flushedCredits('key:7', '2026-11-22'), 415)
  })
})
