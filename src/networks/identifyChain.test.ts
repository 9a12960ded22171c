import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { Network } from './createNetwork.ts'
import { identifyChain } from './identifyChain.ts'

const genesis = `0x${'c5'.repeat(32)}`

/** A network whose head tracker knows the genesis once a test says so, and whose cache records identities. */
function fakeNetwork(identifyMs = 0) {
  const identified: string[] = []
  let known: string | undefined
  const timers = createFakeTimers()
  const network = {
    heads: { genesis: () => known },
    cache: {
      identify: (hash: string) => {
        identified.push(hash)
        return new Promise<void>((resolve) => timers.setTimeout(resolve, identifyMs))
      },
    },
  } as unknown as Network
  return {
    network,
    identified,
    timers,
    know: (hash: string) => {
      known = hash
    },
  }
}

describe('identifyChain', () => {
  it('tells the cache the genesis hash once the head tracker knows it, and looks no more', async () => {
    const { network, identified, timers, know } = fakeNetwork()
    const identifying = identifyChain(network, { retryMs: 100, waitMs: 1_000, timers })
    await identifying.ready
    assert.deepEqual(identified, [], 'not known at start: ready at once, not identified')
    await timers.advance(100)
    assert.deepEqual(identified, [])
    know(genesis)
    await timers.advance(100)
    assert.deepEqual(identified, [genesis])
    await timers.advance(1_000)
    assert.deepEqual(identified, [genesis], 'once')
    assert.equal(timers.pending(), 0)
  })

  it('a start waits for the epoch read at most waitMs; stop ends the looking', async () => {
    const slow = fakeNetwork(5_000)
    slow.know(genesis)
    let ready = false
    void identifyChain(slow.network, { retryMs: 100, waitMs: 1_000, timers: slow.timers }).ready.then(() => {
      ready = true
    })
    await slow.timers.advance(999)
    assert.equal(ready, false)
    await slow.timers.advance(1)
    assert.equal(ready, true)

    const { network, identified, timers, know } = fakeNetwork()
    const identifying = identifyChain(network, { retryMs: 100, waitMs: 1_000, timers })
    identifying.stop()
    know(genesis)
    await timers.advance(1_000)
    assert.deepEqual(identified, [])
  })
})
