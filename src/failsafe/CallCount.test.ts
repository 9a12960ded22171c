import { strict as assert } from 'node:assert'
import { describe, it } from 'node:test'
import { CallCount } from './CallCount.ts'

describe('CallCount', () => {
  it('is idle at once with no call under way', async () => {
    await new CallCount().idle()
  })

  it('settles idle() when the last call under way leaves, not before', async () => {
    const calls = new CallCount()
    calls.enter()
    calls.enter()
    let idle = false
    const waiting = calls.idle().then(() => {
      idle = true
    })
    calls.leave()
    await Promise.resolve()
    assert.equal(idle, false)
    assert.equal(calls.size, 1)
    calls.leave()
    await waiting
    assert.equal(calls.size, 0)
  })
})
