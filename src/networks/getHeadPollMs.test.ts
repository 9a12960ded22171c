import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from '../config/configSchema.ts'
import { getHeadPollMs } from './getHeadPollMs.ts'

const settings = (fragment: Record<string, unknown>) => getHeadPollMs(configSchema.parse(fragment))

describe('getHeadPollMs', () => {
  it('upstreams.headPollMs, 1000 by default', () => {
    assert.equal(settings({}), 1_000)
    assert.equal(settings({ upstreams: { headPollMs: 5_000 } }), 5_000)
  })

  it('the deprecated websocket.headPollMs and gas.pollMs still work: the smallest interval given wins', () => {
    assert.equal(settings({ websocket: { headPollMs: 100 } }), 100)
    assert.equal(settings({ gas: { pollMs: 250 } }), 250)
    assert.equal(settings({ upstreams: { headPollMs: 300 }, websocket: { headPollMs: 600_000 } }), 300)
    assert.equal(
      settings({ upstreams: { headPollMs: 600_000 }, websocket: { headPollMs: 700 }, gas: { pollMs: 400 } }),
      400,
    )
  })
})
