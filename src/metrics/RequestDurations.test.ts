import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RequestDurations, requestBucketsMs } from './RequestDurations.ts'

describe('RequestDurations', () => {
  it('counts each request in its bucket, by network and transport, cumulative when read', () => {
    const durations = new RequestDurations()
    assert.deepEqual(durations.read(), [])
    durations.observe('mainnet', 'http', 0.4) // under 1 ms
    durations.observe('mainnet', 'http', 1) // a bound is its own bucket's (le)
    durations.observe('mainnet', 'http', 30)
    durations.observe('mainnet', 'ws', 60_000) // past the last bound: +Inf only
    durations.observe('base', 'http', 7)
    const read = durations.read()
    assert.deepEqual(
      read.map(({ network, transport }) => `${network}/${transport}`),
      ['mainnet/http', 'mainnet/ws', 'base/http'],
    )
    const [http, ws, base] = read
    const at = (counts: number[] | undefined, boundMs: number) => counts?.[requestBucketsMs.indexOf(boundMs)]
    assert.equal(http?.cumulativeCounts.length, requestBucketsMs.length + 1)
    assert.equal(at(http?.cumulativeCounts, 1), 2)
    assert.equal(at(http?.cumulativeCounts, 25), 2)
    assert.equal(at(http?.cumulativeCounts, 50), 3)
    assert.equal(http?.cumulativeCounts.at(-1), 3)
    assert.equal(http?.sumMs, 31.4)
    assert.equal(at(ws?.cumulativeCounts, 10_000), 0)
    assert.equal(ws?.cumulativeCounts.at(-1), 1)
    assert.equal(ws?.sumMs, 60_000)
    assert.equal(at(base?.cumulativeCounts, 5), 0)
    assert.equal(at(base?.cumulativeCounts, 10), 1)
  })
})
