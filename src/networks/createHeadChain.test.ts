import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createHeadChain, type HeadEvent, type Header } from './createHeadChain.ts'

const hash = (number: number, fork = 0) => `0x${fork.toString(16)}${number.toString(16).padStart(63, '0')}`

/** Block `number` of chain `fork` (fork 0 is the first chain; a fork's blocks below `from` are chain 0's). */
function block(number: number, fork = 0, from = 0): Header {
  const own = fork !== 0 && number >= from
  const parentOwn = fork !== 0 && number - 1 >= from
  return {
    number: `0x${number.toString(16)}`,
    hash: hash(number, own ? fork : 0),
    parentHash: hash(number - 1, parentOwn ? fork : 0),
  }
}

/** A chain over a node whose canonical blocks `canonical` gives; records the fetches and the events. */
function setUp(canonical: (number: number) => Header) {
  const events: HeadEvent[] = []
  const fetches: string[] = []
  const errors: unknown[] = []
  const byHash = new Map<string, Header>()
  const chain = createHeadChain({
    async fetchBlock(method, id) {
      fetches.push(`${method} ${id}`)
      if (method === 'eth_getBlockByNumber') return canonical(Number(id))
      const found = byHash.get(id)
      if (!found) throw new Error(`no block ${id}`)
      return found
    },
    emit: (event) => events.push(event),
    onError: (err) => errors.push(err),
  })
  /** Lets every queued head be linked. */
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  return { chain, events, fetches, errors, byHash, settle }
}

const describeEvents = (events: HeadEvent[]) =>
  events.map((event) => `${event.kind} ${Number(event.header.number)}${event.header.hash.slice(2, 3)}`)

describe('createHeadChain', () => {
  it('the first head anchors the chain unannounced; the next ones are announced once, in order', async () => {
    const { chain, events, fetches, settle } = setUp((number) => block(number))
    chain.accept(block(1))
    chain.accept(block(2))
    chain.accept(block(2))
    chain.accept(block(3))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 20', 'head 30'])
    assert.deepEqual(fetches, [])
    assert.equal(chain.tip()?.hash, block(3).hash)
  })

  it('fills a gap by number, oldest first, before the head that showed it', async () => {
    const { chain, events, fetches, settle } = setUp((number) => block(number))
    chain.accept(block(1))
    chain.accept(block(4))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 20', 'head 30', 'head 40'])
    assert.deepEqual(fetches, ['eth_getBlockByNumber 0x3', 'eth_getBlockByNumber 0x2'])
  })

  it('a reorg: walked back by hash to the fork, dropped blocks newest first, then the new chain', async () => {
    const { chain, events, fetches, byHash, settle } = setUp((number) => block(number, 1, 3))
    for (const number of [3, 4]) byHash.set(block(number, 1, 3).hash, block(number, 1, 3))
    for (const number of [1, 2, 3, 4]) chain.accept(block(number))
    // fork 1 replaces blocks 3 and 4 and adds 5
    chain.accept(block(5, 1, 3))
    await settle()
    assert.deepEqual(describeEvents(events), [
      'head 20',
      'head 30',
      'head 40',
      'dropped 40',
      'dropped 30',
      'head 31',
      'head 41',
      'head 51',
    ])
    assert.deepEqual(fetches.slice(-2), [
      `eth_getBlockByHash ${block(4, 1, 3).hash}`,
      `eth_getBlockByHash ${block(3, 1, 3).hash}`,
    ])
  })

  it('a late head older than the chain is not announced; a failed fetch waits for the next head', async () => {
    let missing = true
    const { chain, events, errors, settle } = setUp((number) => {
      if (missing && number === 3) throw new Error('not yet')
      return block(number)
    })
    chain.accept(block(2))
    chain.accept(block(1))
    chain.accept(block(4))
    await settle()
    assert.deepEqual(describeEvents(events), [])
    assert.equal(errors.length, 1)
    missing = false
    chain.accept(block(4))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 30', 'head 40'])
  })

  it('reset: the next head anchors a new chain', async () => {
    const { chain, events, settle } = setUp((number) => block(number))
    chain.accept(block(1))
    chain.accept(block(2))
    await settle()
    chain.reset()
    assert.equal(chain.tip(), undefined)
    chain.accept(block(5))
    chain.accept(block(6))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 20', 'head 60'])
  })
})
