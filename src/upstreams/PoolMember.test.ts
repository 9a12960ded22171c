import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Upstream } from './createUpstream.ts'
import { PoolMember } from './PoolMember.ts'

/**
 * A member whose upstream is never called, how many times it told its pool it changed class, and
 * its liveness checks: each one asked waits for the test to say whether the node answered.
 */
function setup() {
  const clock = { time: 0 }
  let changes = 0
  const checks: ((alive: boolean) => void)[] = []
  const member = new PoolMember({ label: 'a' } as Upstream, 0, {
    breaker: { failures: 2, cooldownMs: 1000, maxCooldownMs: 8000, now: () => clock.time },
    latencySamples: 4,
    onChange: () => {
      changes++
    },
    checkLiveness: () => new Promise<boolean>((resolve) => checks.push(resolve)),
  })
  return { member, clock, changes: () => changes, checks }
}

describe('PoolMember', () => {
  it('is degraded above an error rate of one half, and tells its pool when that changes, not per call', () => {
    const { member, changes } = setup()
    let failures = 0
    while (!member.isDegraded()) {
      member.recordFailure('HTTP 500', 'degraded')
      failures++
    }
    // 1 - 0.95^n > 0.5 from n = 14
    assert.equal(failures, 14)
    assert.equal(changes(), 1)
    assert.deepEqual([member.requests, member.failures, member.lastError], [14, 14, 'HTTP 500'])
    assert.equal(member.isInUse(), true, 'degraded failures leave its breaker alone')
    member.recordSuccess(10)
    assert.equal(member.isDegraded(), false)
    assert.deepEqual([changes(), member.lastError, member.latencyMs], [2, undefined, 10])
    member.recordSuccess(20)
    assert.equal(member.latencyMs, 11, 'a moving average')
    assert.equal(changes(), 2)
  })

  it('down failures open its breaker; a health check answered brings it back, one failed takes it out', () => {
    const { member, changes } = setup()
    member.recordFailure('timeout', 'down')
    member.recordFailure('timeout', 'down')
    assert.equal(member.isInUse(), false)
    assert.equal(changes(), 1)
    member.noteProbedHead(7n)
    assert.deepEqual([member.isInUse(), member.head, member.lastError], [true, 7n, undefined])
    member.noteProbeFailure('HTTP 502')
    assert.deepEqual([member.isInUse(), member.lastError], [false, 'HTTP 502'])
  })

  it('knows whether its node answered a request sent since a given time: a call’s or a health check’s', () => {
    const { member } = setup()
    assert.equal(member.answeredSince(0), false, 'nothing answered yet')
    member.noteAnswered(100)
    assert.deepEqual([member.answeredSince(100), member.answeredSince(101)], [true, false])
    member.noteAnswered(50)
    assert.equal(member.answeredSince(100), true, 'an answer to an older request moves nothing back')
    member.noteProbedHead(9n, 200)
    assert.deepEqual([member.answeredSince(200), member.answeredSince(201)], [true, false])
  })

  it('silent timeouts wait for one liveness check: answered, nothing is held against it', async () => {
    const { member, checks, clock } = setup()
    clock.time = 40
    for (let index = 0; index < 5; index++) member.recordSilence('no answer within 900 ms', false)
    assert.equal(checks.length, 1, 'one check for every silence while it is under way')
    assert.deepEqual([member.isInUse(), member.failures, member.requests], [true, 0, 0])
    checks[0]?.(true)
    await Promise.resolve()
    assert.deepEqual(
      [member.isInUse(), member.failures, member.requests, member.errorRate, member.lastError],
      [true, 0, 5, 0, undefined],
    )
    assert.equal(member.answeredSince(40), true, 'its answer to the check is what it did meanwhile')
    member.recordSilence('no answer within 900 ms', false)
    assert.equal(checks.length, 2, 'a later silence asks again')
  })

  it('silent timeouts whose liveness check goes unanswered are failures: its breaker opens as for any timeout', async () => {
    const { member, checks, changes } = setup()
    member.recordSilence('no answer within 900 ms', false)
    member.recordSilence('no answer within 900 ms', false)
    assert.equal(member.isInUse(), true, 'in use until the check says')
    checks[0]?.(false)
    await Promise.resolve()
    assert.deepEqual(
      [member.isInUse(), member.failures, member.requests, member.lastError, changes()],
      [false, 2, 2, 'no answer within 900 ms', 1],
    )
  })

  it('a head notified after a health check was sent is kept over the check’s answer', () => {
    const { member } = setup()
    member.noteProbedHead(5n, 0)
    member.noteNotifiedHead(7n, 20)
    member.noteProbedHead(6n, 10)
    assert.equal(member.head, 7n)
    member.noteProbedHead(8n, 30)
    assert.equal(member.head, 8n)
  })

  it('learns where its history starts from a refusal at or below its head only', () => {
    const { member } = setup()
    assert.equal(member.learnMissing(40n, 50n, true), false, 'its head unknown')
    member.noteProbedHead(100n)
    assert.equal(member.learnMissing(40n, 101n, true), false, 'above its head: it lags')
    assert.equal(member.learnMissing(40n, 50n, true), true)
    assert.deepEqual([member.earliestState, member.earliestBlock], [41n, undefined])
    assert.equal(member.learnMissing(30n, 50n, true), false, 'already known to start above it')
  })
})
