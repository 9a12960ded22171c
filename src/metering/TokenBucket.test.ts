import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TokenBucket } from './TokenBucket.ts'

describe('TokenBucket', () => {
  it('starts full, refills at its rate up to one second of credits', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.canTake(500, 0), true)
    bucket.take(400, 0)
    assert.equal(bucket.canTake(101, 0), false)
    assert.equal(bucket.canTake(100, 0), true)
    bucket.take(100, 0)
    assert.equal(bucket.canTake(80, 100), false, '50 credits after 100 ms')
    assert.equal(bucket.canTake(80, 160), true, '80 credits after 160 ms')
    assert.equal(bucket.canTake(500, 60_000), true, 'never more than one second of credits')
    bucket.take(500, 60_000)
    assert.equal(bucket.canTake(1, 60_000), false)
  })

  it('admits a call dearer than the rate when full, and empties', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.canTake(1000, 0), true)
    bucket.take(1000, 0)
    assert.equal(bucket.canTake(5, 0), false)
    assert.equal(bucket.canTake(1000, 999), false)
    assert.equal(bucket.canTake(1000, 1000), true)
  })

  it('tells how long until a call fits: never longer than refilling to full', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.msUntilCanTake(500, 0), 0)
    bucket.take(500, 0)
    assert.equal(bucket.msUntilCanTake(80, 0), 160)
    assert.equal(bucket.msUntilCanTake(5_000, 0), 1_000, 'a dear call waits for a full bucket')
    assert.equal(bucket.msUntilCanTake(80, 100), 60)
    assert.equal(bucket.canTake(80, 159), false)
    assert.equal(bucket.canTake(80, 160), true)
    assert.equal(bucket.canTake(5_000, 999), false)
    assert.equal(bucket.canTake(5_000, 1_000), true)
  })

  it('gives back what was refunded, capped at full', () => {
    const bucket = new TokenBucket(100, 0)
    bucket.take(100, 0)
    bucket.giveBack(30, 0)
    assert.equal(bucket.canTake(30, 0), true)
    assert.equal(bucket.canTake(31, 0), false)
    bucket.giveBack(1000, 0)
    assert.equal(bucket.canTake(100, 0), true)
  })
})
