import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LatencyWindow } from './LatencyWindow.ts'

describe('LatencyWindow', () => {
  it('quantiles by nearest rank; undefined while empty', () => {
    const window = new LatencyWindow(10)
    assert.equal(window.quantile(0.9), undefined)
    for (const ms of [5, 1, 9, 3, 7, 2, 8, 4, 10, 6]) window.add(ms)
    assert.equal(window.quantile(0.9), 9)
    assert.equal(window.quantile(0.5), 5)
    assert.equal(window.quantile(1), 10)
    assert.equal(window.quantile(0), 1)
  })

  it('keeps only the last samples', () => {
    const window = new LatencyWindow(3)
    for (const ms of [1000, 1000, 1000, 1, 2, 3]) window.add(ms)
    assert.equal(window.count, 3)
    assert.equal(window.quantile(1), 3)
  })

  it('stays exact as samples come and go, duplicates included', () => {
    const window = new LatencyWindow(7)
    const all: number[] = []
    let seed = 7
    for (let index = 0; index < 200; index++) {
      seed = (seed * 48271) % 2147483647
      const ms = seed % 13
      window.add(ms)
      all.push(ms)
      const sorted = all.slice(-7).sort((a, b) => a - b)
      for (const q of [0, 0.5, 0.9, 1]) {
        assert.equal(window.quantile(q), sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1])
      }
      // every rank, so the whole sorted order is checked, not a few points of it
      for (let rank = 1; rank <= sorted.length; rank++) {
        assert.equal(window.quantile(rank / sorted.length), sorted[rank - 1], `rank ${rank}`)
      }
    }
  })

  it('refuses an empty window', () => {
    assert.throws(() => new LatencyWindow(0), RangeError)
  })
})
