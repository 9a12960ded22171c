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
})
