import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HeadEvent } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import { createNetworkHead } from '../networks/createNetworkHead.ts'
import type { HeadTracker } from '../networks/HeadTracker.ts'
import { notBelowShownHead } from './notBelowShownHead.ts'

/** A network with only its head view, on a tracker at block 100 whose forks the test sends. */
function networkAt100() {
  const listeners = new Set<(event: HeadEvent) => void>()
  // a cast: the head view uses latest, finalized, subscribe and look only
  const tracker = {
    latest: () => ({ number: 100n, gasLimit: 30_000_000n }),
    finalized: () => undefined,
    subscribe(listener: (event: HeadEvent) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    look() {},
  } as unknown as HeadTracker
  const network = { head: createNetworkHead(tracker) } as unknown as Network
  const rewind = (before: bigint, to: bigint) => {
    for (const listener of listeners)
      listener({ kind: 'fork', from: to + 1n, to, before, deeper: false, pastFinality: false })
  }
  return { network, rewind }
}

const answer = (number: bigint) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"0x${number.toString(16)}"}`)
const resultOf = (payload: unknown) => (JSON.parse(String(payload)) as { result: string }).result

describe('notBelowShownHead', () => {
  it('shows a higher number and never answers below the shown head', async () => {
    const { network } = networkAt100()
    assert.equal(resultOf(await notBelowShownHead(network, 1, answer(100n), 0)), '0x64')
    assert.equal(network.head.shown, 100n)
    // another upstream lags: the client is told what it was told before
    assert.equal(resultOf(await notBelowShownHead(network, 1, answer(98n), 0)), '0x64')
  })

  it('after a rewind the lower head is answered; a number asked for before it is not made the shown head', async () => {
    const { network, rewind } = networkAt100()
    await notBelowShownHead(network, 1, answer(100n), network.head.lowers)
    const lowersBefore = network.head.lowers
    rewind(100n, 90n)
    assert.equal(network.head.shown, 90n)
    // an answer of the chain before the rewind, asked for before it: passed on as it came, never shown
    assert.equal(resultOf(await notBelowShownHead(network, 1, answer(100n), lowersBefore)), '0x64')
    assert.equal(network.head.shown, 90n)
    // asked for after it: the rewound chain's head, then raised again as it grows
    assert.equal(resultOf(await notBelowShownHead(network, 1, answer(90n), network.head.lowers)), '0x5a')
    assert.equal(resultOf(await notBelowShownHead(network, 1, answer(91n), network.head.lowers)), '0x5b')
    assert.equal(network.head.shown, 91n)
  })
})
