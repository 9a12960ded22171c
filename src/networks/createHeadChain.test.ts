import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createHeadChain, type HeadEvent, type Header } from './createHeadChain.ts'

/**
 * A node's chain, as a test drives it: `mine` adds blocks, `reorg` replaces the last ones, `rewind`
 * drops them; every block it ever made stays known by hash (a node's may not, but the chain only
 * asks for blocks of its current branch). Branch letters make hashes distinct and readable.
 */
function createNode(genesisBranch = 'a') {
  const byHash = new Map<string, Header>()
  let canonical: Header[] = []
  const make = (number: number, branch: string, parentHash: string): Header => {
    const header = {
      number: `0x${number.toString(16)}`,
      hash: `0x${branch}${number.toString(16).padStart(63, '0')}`,
      parentHash,
    }
    byHash.set(header.hash, header)
    return header
  }
  const node = {
    byHash,
    head: () => canonical[canonical.length - 1] as Header,
    at: (number: number): Header | undefined => canonical[number],
    mine(count: number, branch = 'a') {
      for (let index = 0; index < count; index++) {
        const parent = canonical[canonical.length - 1]
        canonical.push(make(canonical.length, branch, parent?.hash ?? `0x${'0'.repeat(64)}`))
      }
      return node.head()
    },
    /** Replaces the blocks from `from` on with as many (and `extra` more) of `branch`. */
    reorg(from: number, branch: string, extra = 0) {
      const count = canonical.length - from + extra
      canonical = canonical.slice(0, from)
      return node.mine(count, branch)
    },
    rewind(to: number) {
      canonical = canonical.slice(0, to + 1)
      return node.head()
    },
  }
  node.mine(1, genesisBranch)
  return node
}

function setUp(node: ReturnType<typeof createNode>, options: { depth?: number; finalized?: bigint } = {}) {
  const events: HeadEvent[] = []
  const fetches: string[] = []
  const errors: unknown[] = []
  let failing = false
  const chain = createHeadChain({
    async fetchBlock(method, id) {
      fetches.push(`${method} ${id}`)
      if (failing) throw new Error('not now')
      return (method === 'eth_getBlockByNumber' ? node.at(Number(id)) : node.byHash.get(id)) ?? null
    },
    emit: (event) => events.push(event),
    onError: (err) => errors.push(err),
    ...(options.depth ? { depth: options.depth } : {}),
    finalized: () => options.finalized,
  })
  /** Lets every queued head (and backfill step) be linked: the fetches answer at once. */
  const settle = () => new Promise((resolve) => setImmediate(resolve))
  const fail = (on: boolean) => {
    failing = on
  }
  return { chain, events, fetches, errors, settle, fail }
}

/** Events as short words: `head 5a`, `dropped 4a`, `fork 3`, `fork 3 deeper final`. */
function describeEvents(events: HeadEvent[]): string[] {
  return events.map((event) => {
    if (event.kind === 'fork')
      return `fork ${event.from}${event.deeper ? ' deeper' : ''}${event.pastFinality ? ' final' : ''}`
    if (event.kind === 'newChain') return `newChain ${event.genesis.slice(2, 3)}`
    return `${event.kind} ${Number(event.header.number)}${event.header.hash.slice(2, 3)}`
  })
}

describe('createHeadChain', () => {
  it('the first head anchors the chain unannounced; the next ones are announced once, in order', async () => {
    const node = createNode()
    node.mine(3)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    chain.accept(node.mine(1))
    chain.accept(node.head())
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 4a', 'head 5a'])
    assert.equal(chain.tip()?.hash, node.head().hash)
  })

  it('behind the first head, its ancestors are fetched until the chain remembers depth blocks', async () => {
    const node = createNode()
    node.mine(100)
    const { chain, events, settle } = setUp(node, { depth: 40 })
    chain.accept(node.head())
    await settle()
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 101a'])
    assert.equal(chain.at(62n)?.hash, node.at(62)?.hash)
    assert.equal(chain.at(61n), undefined)
  })

  it('fills a gap by its parents, oldest first, before the head that showed it', async () => {
    const node = createNode()
    node.mine(1)
    const { chain, events, fetches, settle } = setUp(node, { depth: 10 })
    chain.accept(node.head())
    await settle()
    node.mine(2)
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 2a', 'head 3a', 'head 4a'])
    assert.deepEqual(fetches.slice(-2), [
      `eth_getBlockByHash ${node.at(3)?.hash}`,
      `eth_getBlockByHash ${node.at(2)?.hash}`,
    ])
  })

  it('a reorg: the fork, the dropped blocks newest first, then the new branch', async () => {
    const node = createNode()
    node.mine(4)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    await settle()
    chain.accept(node.reorg(3, 'b', 1))
    await settle()
    assert.deepEqual(describeEvents(events), [
      'fork 3',
      'dropped 4a',
      'dropped 3a',
      'head 3b',
      'head 4b',
      'head 5b',
    ])
  })

  it('a reorg below the head it started at, and one deeper than it remembers', async () => {
    const node = createNode()
    node.mine(200)
    const { chain, events, settle } = setUp(node, { depth: 100 })
    chain.accept(node.head())
    await settle()
    // 10 deep from the start head: its fork was fetched behind it
    chain.accept(node.reorg(191, 'b'))
    await settle()
    assert.deepEqual(describeEvents(events).slice(0, 3), ['fork 191', 'dropped 200a', 'dropped 199a'])
    assert.deepEqual(
      describeEvents(events.filter((event) => event.kind === 'head')),
      Array.from({ length: 10 }, (_, index) => `head ${191 + index}b`),
    )
    events.length = 0
    // 150 deep: below the 100 blocks remembered, so everything remembered is dropped and may be older
    chain.accept(node.reorg(51, 'c'))
    await settle()
    assert.deepEqual(describeEvents(events).slice(0, 1), ['fork 101 deeper final'])
    assert.equal(events.filter((event) => event.kind === 'dropped').length, 100)
    assert.equal(events.filter((event) => event.kind === 'head').length, 100)
    assert.equal(chain.tip()?.hash, node.head().hash)
  })

  it('a rewind to a block it has drops the blocks above it; new blocks then extend the shorter chain', async () => {
    const node = createNode()
    node.mine(10)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    await settle()
    // a lower head is a rewind only when the caller says the chain went back (and the tip is gone)
    chain.accept(node.rewind(7))
    await settle()
    assert.deepEqual(describeEvents(events), [])
    chain.accept(node.head(), true)
    await settle()
    assert.deepEqual(describeEvents(events), ['fork 8', 'dropped 10a', 'dropped 9a', 'dropped 8a'])
    assert.equal(chain.tip()?.hash, node.at(7)?.hash)
    events.length = 0
    chain.accept(node.reorg(5, 'b', -1))
    await settle()
    assert.deepEqual(describeEvents(events), [
      'fork 5',
      'dropped 7a',
      'dropped 6a',
      'dropped 5a',
      'head 5b',
      'head 6b',
    ])
  })

  it('a fork at or below the finalized block is past finality', async () => {
    const node = createNode()
    node.mine(10)
    const { chain, events, settle } = setUp(node, { finalized: 8n })
    chain.accept(node.head())
    await settle()
    chain.accept(node.reorg(9, 'b'))
    await settle()
    chain.accept(node.reorg(8, 'c'))
    await settle()
    assert.deepEqual(describeEvents(events.filter((event) => event.kind === 'fork')), [
      'fork 9',
      'fork 8 final',
    ])
  })

  it('a new chain under the same id: every block is dropped, from block 0', async () => {
    const node = createNode()
    node.mine(5)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    await settle()
    const other = createNode('z')
    other.mine(2, 'z')
    for (const [hash, header] of other.byHash) node.byHash.set(hash, header)
    chain.accept(other.head())
    await settle()
    assert.deepEqual(describeEvents(events).slice(0, 2), ['fork 0', 'dropped 5a'])
    assert.equal(events.filter((event) => event.kind === 'dropped').length, 6)
    assert.deepEqual(describeEvents(events).slice(-3), ['head 0z', 'head 1z', 'head 2z'])
  })

  it('a failed fetch waits for the next head', async () => {
    const node = createNode()
    node.mine(2)
    const { chain, events, errors, settle, fail } = setUp(node, { depth: 3 })
    chain.accept(node.head())
    await settle()
    node.mine(1)
    fail(true)
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), [])
    assert.equal(errors.length, 1)
    fail(false)
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 3a', 'head 4a', 'head 5a'])
  })

  it('reset: the next head anchors a new chain', async () => {
    const node = createNode()
    node.mine(2)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    await settle()
    chain.reset()
    assert.equal(chain.tip(), undefined)
    node.mine(3)
    chain.accept(node.head())
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 6a'])
  })
  it("more new blocks than it remembers: no fork while its tip is still the node's, else a deeper one", async () => {
    const node = createNode()
    node.mine(10)
    const { chain, events, settle } = setUp(node, { depth: 8 })
    chain.accept(node.head())
    await settle()
    node.mine(19)
    chain.accept(node.mine(1))
    await settle()
    assert.deepEqual(describeEvents(events), ['head 30a'])
    events.length = 0
    node.reorg(28, 'b', 20)
    chain.accept(node.head())
    await settle()
    assert.deepEqual(describeEvents(events).slice(0, 2), ['fork 23 deeper final', 'dropped 30a'])
    assert.deepEqual(describeEvents(events).slice(-1), ['head 50b'])
  })

  it('a backfill step that fails waits a number of heads, doubling, before the next try', async () => {
    const node = createNode()
    node.mine(40)
    const { chain, errors, settle, fail } = setUp(node, { depth: 20 })
    fail(true)
    chain.accept(node.head())
    await settle()
    assert.equal(errors.length, 1)
    // one head's pause: the next head tries again, fails, and the pause doubles
    chain.accept(node.mine(1))
    await settle()
    assert.equal(errors.length, 2)
    chain.accept(node.mine(1))
    await settle()
    assert.equal(errors.length, 2, 'a head passes without a try')
    fail(false)
    chain.accept(node.mine(1))
    await settle()
    assert.equal(errors.length, 2)
    assert.equal(chain.at(24n)?.hash, node.at(24)?.hash)
  })
  it('a lower head said to go back is no rewind while the node still has the tip (an answer from a backend behind)', async () => {
    const node = createNode()
    node.mine(10)
    const { chain, events, settle } = setUp(node)
    chain.accept(node.head())
    await settle()
    chain.accept(node.at(8) as Header, true)
    await settle()
    assert.deepEqual(describeEvents(events), [])
    assert.equal(chain.tip()?.hash, node.head().hash)
  })
})
