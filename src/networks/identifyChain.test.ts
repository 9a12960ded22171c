import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { Network } from './createNetwork.ts'
import { identifyChain } from './identifyChain.ts'

const genesis = `0x${'c5'.repeat(32)}`

/** A network whose pool answers block 0 as `answers` say, one per ask, and whose cache records identities. */
function fakeNetwork(answers: (() => Promise<string>)[]) {
  const identified: string[] = []
  const asked: unknown[] = []
  const network = {
    name: 'test',
    pool: {
      send: (body: string) => {
        asked.push(JSON.parse(body))
        const next = answers.shift()
        return next ? next().then((text) => Buffer.from(text)) : new Promise(() => {})
      },
    },
    cache: {
      identify: async (hash: string) => {
        identified.push(hash)
      },
    },
  } as unknown as Network
  return { network, identified, asked }
}

describe('identifyChain', () => {
  it('asks for block 0 until an upstream answers, then tells the cache the genesis hash', async () => {
    const timers = createFakeTimers()
    const { network, identified, asked } = fakeNetwork([
      async () => {
        throw new Error('no upstream available')
      },
      async () => '{"jsonrpc":"2.0","id":1,"result":null}',
      async () => `{"jsonrpc":"2.0","id":1,"result":{"number":"0x0","hash":"${genesis}"}}`,
    ])
    const identifying = identifyChain(network, { retryMs: 100, waitMs: 1_000, timers })
    await identifying.ready
    assert.deepEqual(identified, [], 'the first failure: ready, not identified')
    assert.deepEqual(asked[0], {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getBlockByNumber',
      params: ['0x0', false],
    })
    await timers.advance(100)
    assert.deepEqual(identified, [], 'a null block is not an identity')
    await timers.advance(100)
    assert.deepEqual(identified, [genesis])
    assert.equal(asked.length, 3)
    await timers.advance(1_000)
    assert.equal(asked.length, 3, 'not asked again')
    assert.equal(timers.pending(), 0)
  })

  it('a start does not wait longer than waitMs for a hung upstream; stop ends the retries', async () => {
    const timers = createFakeTimers()
    const { network, identified } = fakeNetwork([])
    const identifying = identifyChain(network, { retryMs: 100, waitMs: 1_000, timers })
    let ready = false
    void identifying.ready.then(() => {
      ready = true
    })
    await timers.advance(999)
    assert.equal(ready, false)
    await timers.advance(1)
    assert.equal(ready, true)
    identifying.stop()
    assert.deepEqual(identified, [])
  })
})
