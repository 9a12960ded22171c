import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CircuitBreaker } from './CircuitBreaker.ts'

function breaker() {
  const clock = { time: 0 }
  const subject = new CircuitBreaker({
    failures: 3,
    cooldownMs: 100,
    maxCooldownMs: 350,
    now: () => clock.time,
  })
  return { clock, subject }
}

describe('CircuitBreaker', () => {
  it('opens after the configured consecutive failures; a success in between starts the count again', () => {
    const { subject } = breaker()
    assert.equal(subject.recordFailure(false), false)
    assert.equal(subject.recordFailure(false), false)
    assert.equal(subject.recordSuccess(), false)
    assert.equal(subject.recordFailure(false), false)
    assert.equal(subject.recordFailure(false), false)
    assert.equal(subject.state, 'closed')
    assert.equal(subject.recordFailure(false), true)
    assert.equal(subject.state, 'open')
  })

  it('lets one probe through per cooldown; a failed probe doubles the cooldown up to the maximum', () => {
    const { clock, subject } = breaker()
    subject.trip()
    assert.equal(subject.claimProbe(), false, 'not before the cooldown')
    clock.time = 100
    assert.equal(subject.claimProbe(), true)
    assert.equal(subject.claimProbe(), false, 'one probe at a time')
    subject.recordFailure(true)
    assert.deepEqual([subject.cooldownMs, subject.retryAt], [200, 300])
    clock.time = 300
    assert.equal(subject.claimProbe(), true)
    subject.recordFailure(true)
    assert.deepEqual([subject.cooldownMs, subject.retryAt], [350, 650])
  })

  it('failures of calls begun before it opened do not stretch the cooldown', () => {
    const { subject } = breaker()
    subject.trip()
    for (let index = 0; index < 5; index++) subject.recordFailure(false)
    assert.deepEqual([subject.cooldownMs, subject.retryAt], [100, 100])
  })

  it('a successful probe, or a passed health check, closes it with the first cooldown again', () => {
    const { clock, subject } = breaker()
    subject.trip()
    clock.time = 100
    subject.claimProbe()
    subject.recordFailure(true)
    assert.equal(subject.cooldownMs, 200)
    assert.equal(subject.recordSuccess(), true)
    assert.deepEqual([subject.state, subject.cooldownMs, subject.consecutiveFailures], ['closed', 100, 0])
    subject.trip()
    subject.close()
    assert.equal(subject.state, 'closed')
    assert.equal(subject.trip(), true)
    assert.equal(subject.trip(), false, 'already open')
  })
})
