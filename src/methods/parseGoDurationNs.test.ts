import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseGoDurationNs } from './parseGoDurationNs.ts'

describe('parseGoDurationNs', () => {
  it("reads Go's durations: each unit, sums, fractions", () => {
    assert.equal(parseGoDurationNs('0'), 0n)
    assert.equal(parseGoDurationNs('10s'), 10_000_000_000n)
    assert.equal(parseGoDurationNs('1m30s'), 90_000_000_000n)
    assert.equal(parseGoDurationNs('500ms'), 500_000_000n)
    assert.equal(parseGoDurationNs('1.5h'), 5_400_000_000_000n)
    assert.equal(parseGoDurationNs('2us'), 2_000n)
    assert.equal(parseGoDurationNs('2µs'), 2_000n)
    assert.equal(parseGoDurationNs('2μs'), 2_000n)
    assert.equal(parseGoDurationNs('7ns'), 7n)
    assert.equal(parseGoDurationNs('1000000h'), 3_600_000_000_000_000_000n)
    assert.equal(parseGoDurationNs('60.0000000001s'), 60_000_000_000n, 'finer than a nanosecond: dropped')
    assert.equal(parseGoDurationNs('1h1m1s1ms1us1ns'), 3_661_001_001_001n)
  })

  it('throws on anything else', () => {
    for (const text of ['', '10', '-1s', '+1s', '1d', 's', '.5s', '1.s', 'forever', '10 s']) {
      assert.throws(() => parseGoDurationNs(text), /not a duration/, text)
    }
  })
})
