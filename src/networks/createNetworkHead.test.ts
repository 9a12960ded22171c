import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSharedHeads } from '../cache/createSharedHeads.ts'
import type { HeadEvent } from './createHeadChain.ts'
import { createNetworkHead } from './createNetworkHead.ts'
import type { Head, HeadTracker } from './HeadTracker.ts'

/** A head tracker whose head the test sets and whose events it sends; counts the looks asked for. */
function fakeTracker() {
  const listeners = new Set<(event: HeadEvent) => void>()
  const state = {
    latest: undefined as Head | undefined,
    finalized: undefined as bigint | undefined,
    looks: 0,
  }
  // a cast: the head view uses latest, finalized, subscribe and look only
  const tracker = {
    latest: () => state.latest,
    finalized: () => state.finalized,
    subscribe(listener: (event: HeadEvent) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    look() {
      state.looks++
    },
  } as unknown as HeadTracker
  const emit = (event: HeadEvent) => {
    for (const listener of listeners) listener(event)
  }
  /** The chain went from `before` to `to` (lower: a rewind; the same: a reorg at the same height). */
  const fork = (before: bigint, to: bigint) =>
    emit({ kind: 'fork', from: to + 1n, to, before, deeper: false, pastFinality: false })
  return { tracker, state, emit, fork, listeners }
}

describe('createNetworkHead', () => {
  it("eth_blockNumber's number is the chain's, withheld after another instance's lower until the chain moves", () => {
    const { tracker, state, emit, fork } = fakeTracker()
    let lowered: () => void = () => {}
    let lowers = 0
    // a shown head another instance lowers (as createSharedHeads does on hearing it)
    const shared = {
      shown: 0n,
      get lowers() {
        return lowers
      },
      show: () => undefined,
      lower: async () => {},
      onLower(listener: () => void) {
        lowered = listener
        return () => {}
      },
    }
    const head = createNetworkHead(tracker, { shared })
    assert.equal(head.blockNumber(), undefined, 'no head yet')
    state.latest = { number: 191n, gasLimit: 1n }
    assert.equal(head.blockNumber(), 191n)
    lowers++
    lowered()
    assert.equal(head.blockNumber(), undefined, 'a rewind this chain has not seen')
    assert.equal(state.looks, 1, 'the tracker looks at once')
    state.latest = { number: 46n, gasLimit: 1n }
    fork(191n, 46n)
    assert.equal(head.blockNumber(), 46n)
    emit({ kind: 'head', header: { number: '0x2f', hash: '0x2f', parentHash: '0x2e' } })
    state.latest = { number: 47n, gasLimit: 1n }
    assert.equal(head.blockNumber(), 47n)
  })

  it("latest and finalized are the tracker's, as they change", () => {
    const { tracker, state } = fakeTracker()
    const head = createNetworkHead(tracker)
    assert.equal(head.latest(), undefined)
    assert.equal(head.finalized(), undefined)
    state.latest = { number: 12n, gasLimit: 30_000_000n }
    state.finalized = 4n
    assert.deepEqual(head.latest(), { number: 12n, gasLimit: 30_000_000n })
    assert.equal(head.finalized(), 4n)
    state.finalized = 3n // it goes back with the chain
    assert.equal(head.finalized(), 3n)
  })

  it('the shown head is raised by higher numbers only; one above the chain makes the tracker look', () => {
    const { tracker, state } = fakeTracker()
    const head = createNetworkHead(tracker)
    assert.equal(head.shown, 0n)
    state.latest = { number: 10n, gasLimit: 1n }
    assert.equal(head.show(9n), undefined, 'nothing to wait for alone')
    assert.equal(head.shown, 9n)
    head.show(7n)
    assert.equal(head.shown, 9n, 'never lowered by a lower number')
    assert.equal(state.looks, 0, 'at or below the chain: nothing to look for')
    head.show(10n)
    assert.equal(state.looks, 0)
    head.show(11n)
    assert.equal(head.shown, 11n)
    assert.equal(state.looks, 1, 'a block the chain has not heard of: it looks now')
  })

  it('a fork back below the shown head lowers it to the fork, counts the lower and drops head-scoped answers', () => {
    const { tracker, fork } = fakeTracker()
    let dropped = 0
    const head = createNetworkHead(tracker, { onLower: () => dropped++ })
    head.show(50n)
    fork(50n, 50n) // a reorg at the same height: nothing to lower
    fork(50n, 50n + 1n) // a longer branch
    assert.equal(head.shown, 50n)
    assert.equal(head.lowers, 0)
    fork(52n, 51n) // back, but above what clients were shown
    assert.equal(head.shown, 50n)
    assert.equal(head.lowers, 0)
    assert.equal(dropped, 0)

    fork(50n, 46n) // a rewind below it
    assert.equal(head.shown, 46n)
    assert.equal(head.lowers, 1)
    assert.equal(dropped, 1)
    head.show(47n)
    assert.equal(head.shown, 47n, 'raised again from the lower head')
  })

  it('a lower made by hand is the same lower', async () => {
    const { tracker } = fakeTracker()
    let dropped = 0
    const head = createNetworkHead(tracker, { onLower: () => dropped++ })
    head.show(20n)
    await head.lower(15n)
    assert.equal(head.shown, 15n)
    assert.equal(head.lowers, 1)
    assert.equal(dropped, 1)
  })

  it('shared: the shown head is the shared one, and a lower heard from another instance counts too', async () => {
    const { tracker, fork } = fakeTracker()
    const shared = createSharedHeads({
      graceMs: 20,
      raise: async () => undefined,
      lower: async () => undefined,
      // Redis away: each number is shown at once, as by a single instance
      connected: () => false,
    })
    const sharedHead = shared.forChain(1)
    let dropped = 0
    const head = createNetworkHead(tracker, { shared: sharedHead, onLower: () => dropped++ })
    head.show(30n)
    assert.equal(sharedHead.shown, 30n)
    assert.equal(head.shown, 30n)

    fork(30n, 25n)
    assert.equal(head.shown, 25n)
    assert.equal(sharedHead.shown, 25n)
    assert.equal(sharedHead.lowers, 1)
    assert.equal(head.lowers, 1)
    assert.equal(dropped, 1)

    // another instance lowered it (a newer generation, read from Redis)
    shared.offer(1, { number: 20n, raisedAtUs: undefined, generation: 5n })
    assert.equal(head.shown, 20n)
    assert.equal(head.lowers, 2)
    assert.equal(dropped, 2)
  })

  it('once closed, it no longer follows the chain nor hears lowers', () => {
    const { tracker, fork, listeners } = fakeTracker()
    let dropped = 0
    const head = createNetworkHead(tracker, { onLower: () => dropped++ })
    assert.equal(listeners.size, 1)
    head.show(40n)
    head.close()
    assert.equal(listeners.size, 0)
    fork(40n, 30n)
    assert.equal(head.shown, 40n)
    assert.equal(dropped, 0)
  })
})
