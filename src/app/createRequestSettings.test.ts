import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from '../config/configSchema.ts'
import { createRequestSettings, type RequestSettingsParts } from './createRequestSettings.ts'

const configOf = (raw: Record<string, unknown>) =>
  configSchema.parse({
    networks: [{ name: 'one', chainId: 1, upstreams: [{ url: 'http://a.example' }] }],
    ...raw,
  })

const keys = { stand: 'in' }
const parts = {
  rpc: { keys },
  gas: { indexers: new Map() },
  upgrade: { hubs: new Map() },
  now: () => 0,
} as unknown as RequestSettingsParts

describe('createRequestSettings', () => {
  it("reads the live keys from the config into every route's settings, around the parts no key changes", () => {
    const settings = createRequestSettings(
      parts,
      configOf({
        server: { maxBatchSize: 5 },
        websocket: { maxInFlightRequests: 3 },
        gas: { historyBlocks: 7 },
        metrics: { token: 'm'.repeat(16) },
      }),
    )
    const { rpc, gas, upgrade, metricsToken } = settings.current()
    assert.deepEqual([rpc.maxBatchSize, gas.maxBatchSize, upgrade.maxBatchSize], [5, 5, 5])
    assert.deepEqual([gas.historyBlocks, upgrade.maxInFlight, metricsToken], [7, 3, 'm'.repeat(16)])
    assert.equal(upgrade.keys, keys)
    assert.equal(upgrade.authFailures, rpc.authFailures, 'one limiter for every route')
  })

  it("a plan's maxCallsInFlight, its default or the config's, for every route; a swap brings a new one", () => {
    const settings = createRequestSettings(parts, configOf({ plans: { core: { maxCallsInFlight: 4 } } }))
    const { rpc, gas, upgrade } = settings.current()
    assert.deepEqual(
      [rpc, gas, upgrade].map((each) => each.maxCallsInFlight('core')),
      [4, 4, 4],
    )
    assert.deepEqual(
      (['developer', 'team', 'growth', 'custom'] as const).map((plan) => rpc.maxCallsInFlight(plan)),
      [64, 96, 96, 96],
    )
    settings.swap(configOf({ plans: { core: { maxCallsInFlight: 8 } } }), false)
    assert.equal(settings.current().rpc.maxCallsInFlight('core'), 8)
  })

  it('swap puts new settings in place and leaves the old ones as they were; failed attempts count on unless auth changed', () => {
    const config = configOf({ auth: { failureBurst: 1 } })
    const settings = createRequestSettings(parts, config)
    const before = settings.current()
    before.rpc.authFailures.recordFailure(1, '10.0.0.1')
    assert.ok(before.rpc.authFailures.retryAfterMs(1, '10.0.0.1') > 0)

    settings.swap({ ...config, server: { ...config.server, maxBatchSize: 2 } }, false)
    const after = settings.current()
    assert.notEqual(after, before)
    assert.deepEqual([before.rpc.maxBatchSize, after.rpc.maxBatchSize], [1000, 2])
    assert.ok(after.rpc.authFailures.retryAfterMs(1, '10.0.0.1') > 0, 'the same count')

    settings.swap(configOf({ auth: { failureBurst: 2 } }), true)
    assert.equal(settings.current().rpc.authFailures.retryAfterMs(1, '10.0.0.1'), 0, 'the count starts again')
    assert.ok(before.rpc.authFailures.retryAfterMs(1, '10.0.0.1') > 0, 'the old limiter is not changed')
  })
})
