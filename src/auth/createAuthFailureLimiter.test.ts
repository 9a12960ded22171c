import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createAuthFailureLimiter } from './createAuthFailureLimiter.ts'

function setup(options: { burst?: number; perMinute?: number; maxEntries?: number } = {}) {
  let nowMs = Date.parse('2026-11-22T12:00:00Z')
  const limiter = createAuthFailureLimiter({
    burst: options.burst ?? 20,
    perMinute: options.perMinute ?? 60,
    now: () => nowMs,
    ...(options.maxEntries === undefined ? {} : { maxEntries: options.maxEntries }),
  })
  const fail = (times: number, keyId: number, address: string) => {
    for (let i = 0; i < times; i++) limiter.recordFailure(keyId, address)
  }
  return { limiter, fail, advance: (ms: number) => (nowMs += ms) }
}

describe('createAuthFailureLimiter', () => {
  it('an address may fail `burst` times, then waits for its allowance to come back, one per interval', () => {
    const { limiter, fail, advance } = setup({ burst: 20, perMinute: 60 })
    fail(19, 1, '10.0.0.1')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 0, 'one failure left')
    fail(1, 1, '10.0.0.1')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 1_000)
    assert.equal(limiter.retryAfterMs(2, '10.0.0.1'), 1_000, 'for every key')
    advance(400)
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 600)
    advance(600)
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 0, 'one attempt back after a second')
    fail(1, 1, '10.0.0.1')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 1_000, 'and it is spent again')
  })

  it('failures keep coming while refused do not push the wait past one interval', () => {
    const { limiter, fail } = setup({ burst: 3, perMinute: 6 })
    fail(50, 1, '10.0.0.1')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 10_000)
  })

  it('one address is not held against another, nor IPv4 mapped into IPv6 against itself', () => {
    const { limiter, fail } = setup({ burst: 5 })
    fail(5, 1, '127.0.0.1')
    assert.ok(limiter.retryAfterMs(7, '::ffff:127.0.0.1') > 0, 'the same client')
    assert.equal(limiter.retryAfterMs(7, '127.0.0.2'), 0, 'another client, another key')
  })

  it('IPv6 clients count per /64', () => {
    const { limiter } = setup({ burst: 5 })
    for (let i = 1; i <= 5; i++) limiter.recordFailure(1, `2001:db8:0:1::${i.toString(16)}`)
    assert.ok(limiter.retryAfterMs(2, '2001:db8:0:1:ffff::1') > 0)
    assert.equal(limiter.retryAfterMs(2, '2001:db8:0:2::1'), 0)
  })

  it('a key under attack from many addresses: those that failed wait, those with a clean record are still checked', () => {
    const { limiter, advance } = setup({ burst: 20, perMinute: 60 })
    for (let i = 0; i < 20; i++) limiter.recordFailure(1, `10.0.1.${i}`)
    assert.equal(limiter.retryAfterMs(1, '10.0.1.0'), 1_000, 'failed once: waits for the key')
    assert.equal(limiter.retryAfterMs(1, '10.9.9.9'), 0, 'never failed: the owner is not locked out')
    assert.equal(limiter.retryAfterMs(2, '10.0.1.0'), 0, 'other keys are not under attack')
    advance(1_000)
    assert.equal(limiter.retryAfterMs(1, '10.0.1.0'), 0, 'the key has an attempt again')
  })

  it('at a key under attack, a client that failed waits until the key has an attempt again or its own record is clean', () => {
    const { limiter, fail, advance } = setup({ burst: 4, perMinute: 60 })
    fail(1, 2, '10.0.0.3') // on another key: clean again 1 s later
    advance(500)
    fail(4, 1, '10.0.0.1') // key 1 is empty now: its next attempt comes in 1 s
    fail(2, 9, '10.0.0.2') // on another key: clean again in 2 s
    assert.equal(limiter.retryAfterMs(1, '10.0.0.2'), 1_000, 'the key first')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.3'), 500, 'its record first')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.4'), 0)
    advance(500)
    assert.equal(limiter.retryAfterMs(1, '10.0.0.3'), 0)
  })

  it('remembers at most maxEntries addresses: the longest quiet are forgotten first', () => {
    const { limiter, fail } = setup({ burst: 2, maxEntries: 3 })
    fail(2, 1, '10.0.0.1')
    fail(2, 2, '10.0.0.2')
    fail(2, 3, '10.0.0.3')
    fail(1, 1, '10.0.0.1') // most recent again
    fail(2, 4, '10.0.0.4') // one address too many: 10.0.0.2 goes
    assert.ok(limiter.retryAfterMs(5, '10.0.0.1') > 0)
    assert.equal(limiter.retryAfterMs(5, '10.0.0.2'), 0)
    assert.ok(limiter.retryAfterMs(5, '10.0.0.3') > 0)
    assert.ok(limiter.retryAfterMs(5, '10.0.0.4') > 0)
  })

  it('intervals that are not whole milliseconds still allow exactly `burst` failures', () => {
    const { limiter, fail } = setup({ burst: 20, perMinute: 7 })
    fail(19, 1, '10.0.0.1')
    assert.equal(limiter.retryAfterMs(1, '10.0.0.1'), 0)
    fail(1, 1, '10.0.0.1')
    assert.ok(Math.abs(limiter.retryAfterMs(1, '10.0.0.1') - 60_000 / 7) < 0.01)
  })
})
