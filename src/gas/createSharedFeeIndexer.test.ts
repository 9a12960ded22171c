import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { type Logger, pino } from 'pino'
import { until } from '../../test/helpers/until.ts'
import { createStores } from '../app/createStores.ts'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { Leadership } from '../store/leadership.ts'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { createFeeIndexer } from './createFeeIndexer.ts'
import { createSharedFeeIndexer } from './createSharedFeeIndexer.ts'
import type { FeeHistoryStore } from './feeHistoryStore.ts'

const chainId = 1
/** A block's hash on the chain's first branch, or (`branch` 1) on the branch a reorg made. */
const hash = (number: number, branch = 0) => `0x${branch}${number.toString(16).padStart(63, '0')}`
const header = (number: number, branch = 0): Header => ({
  number: `0x${number.toString(16)}`,
  hash: hash(number, branch),
  parentHash: hash(number - 1, branch),
  baseFeePerGas: `0x${(1_000 + number).toString(16)}`,
})
const silent = pino({ level: 'silent' })

/** One process's view of a chain whose node answers eth_feeHistory; the test drives its head tracker. */
function fakeNetwork() {
  const feeHistoryCalls: string[] = []
  const listeners = new Set<(event: HeadEvent) => void>()
  let newest = header(10)
  /** Blocks from this one on are the reorg's branch (1). */
  let branchFrom = Number.POSITIVE_INFINITY
  const branchOf = (number: number) => (number >= branchFrom ? 1 : 0)
  const pool = {
    async send(body: string) {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] }
      let result: unknown = null
      if (method === 'eth_feeHistory') {
        feeHistoryCalls.push(String(params[1]))
        const count = Number(params[0])
        const last = Number(params[1])
        const numbers = Array.from({ length: count }, (_, index) => last - count + 1 + index)
        result = {
          oldestBlock: `0x${(last - count + 1).toString(16)}`,
          baseFeePerGas: [...numbers, last + 1].map((number) => `0x${(1_000 + number).toString(16)}`),
          gasUsedRatio: numbers.map(() => 0.5),
          reward: numbers.map(() => ['0x1', '0x2', '0x3', '0x4', '0x5']),
        }
      } else if (method === 'eth_getBlockByNumber') {
        const number = Number(params[0])
        result = header(number, branchOf(number))
      }
      return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result }))
    },
  } as unknown as UpstreamPool
  const heads = {
    header: () => newest,
    subscribe(listener: (event: HeadEvent) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    poll: async () => undefined,
  }
  const network = { chainId, name: 'test', pool, heads } as unknown as Network
  const emit = (event: HeadEvent) => {
    for (const listener of listeners) listener(event)
  }
  const announce = (number: number) => {
    newest = header(number, branchOf(number))
    emit({ kind: 'head', header: newest })
  }
  /**
   * The chain leaves its blocks from `from` on, as the head tracker announces it: the fork, each block
   * dropped (newest first), then the new branch's blocks up to `to` (none: a rewind to `from - 1`).
   */
  const fork = (from: number, to: number) => {
    const before = Number(newest.number)
    const dropped = Array.from({ length: before - from + 1 }, (_, index) =>
      header(before - index, branchOf(before - index)),
    )
    if (to >= from) branchFrom = from
    newest = header(from - 1, branchOf(from - 1))
    const event = {
      kind: 'fork',
      from: BigInt(from),
      to: BigInt(Math.max(to, from - 1)),
      before: BigInt(before),
    }
    emit({ ...event, deeper: false, pastFinality: false } as HeadEvent)
    for (const block of dropped) emit({ kind: 'dropped', header: block })
    for (let number = from; number <= to; number++) announce(number)
  }
  return { network, feeHistoryCalls, announce, fork }
}

/** A leadership the test hands over. */
function fakeLeadership(initially: boolean) {
  let held = initially
  const listeners = new Set<(held: boolean) => void>()
  const leadership: Leadership = {
    held: () => held,
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
  const set = (value: boolean) => {
    held = value
    for (const listener of listeners) listener(value)
  }
  return { leadership, set }
}

/** `store`, counting the follower's reads of it (each read begins with the head hashes). */
function countingReads(store: FeeHistoryStore, reads: { count: number }): FeeHistoryStore {
  return {
    ...store,
    getHeadHashes(id) {
      reads.count++
      return store.getHeadHashes(id)
    },
  }
}

function instance(
  store: FeeHistoryStore,
  leads: boolean,
  options: { sole?: true | undefined; logger?: Logger } = {},
) {
  const chain = fakeNetwork()
  const lease = fakeLeadership(leads)
  if (options.sole) lease.leadership.sole = true
  const log = options.logger ?? silent
  const indexer = createSharedFeeIndexer({
    network: chain.network,
    createIndexer: () =>
      createFeeIndexer({
        network: chain.network,
        store,
        windowBlocks: 8,
        chunkBlocks: 1024,
        pollMs: 60_000,
        log,
      }),
    leadership: lease.leadership,
    store,
    windowBlocks: 8,
    followMs: 20,
    log,
  })
  return { ...chain, ...lease, indexer }
}

describe('createSharedFeeIndexer', async () => {
  const stores = await createStores({ sqlite: ':memory:' }, { exclusive: false })
  after(() => stores.close())

  it('the leader indexes, a follower serves the same window from the store; the lead moves and so does the indexing', async () => {
    const a = instance(stores.feeHistory, true)
    const b = instance(stores.feeHistory, false)
    a.indexer.start()
    b.indexer.start()
    await until(() => a.indexer.window()?.head === 10, "the leader's first pass")
    await until(() => b.indexer.window()?.head === 10, 'the follower reading it')
    for (const number of [11, 12, 13]) {
      a.announce(number)
      b.announce(number)
    }
    await until(() => b.indexer.window()?.head === 13, 'the follower at the new head')
    assert.equal(b.indexer.status(), 'ready')
    const leaderWindow = a.indexer.window()
    assert.equal(leaderWindow?.head, 13)
    assert.deepEqual(b.indexer.window(), leaderWindow)
    assert.deepEqual(
      b.indexer.window()?.blocks.map((block) => block.number),
      [6, 7, 8, 9, 10, 11, 12, 13],
    )
    assert.deepEqual(b.feeHistoryCalls, [], 'a follower asks no node for fee history')

    // the lead moves to b: it indexes what comes next, a follows it from the store
    a.set(false)
    b.set(true)
    const aCalls = a.feeHistoryCalls.length
    a.announce(14)
    b.announce(14)
    await until(() => b.indexer.window()?.head === 14, 'the new leader indexing')
    await until(() => a.indexer.window()?.head === 14, 'the old leader following')
    assert.equal(a.feeHistoryCalls.length, aCalls, 'the old leader indexes no more')
    assert.deepEqual(a.indexer.window()?.blocks, b.indexer.window()?.blocks)
    assert.equal(a.indexer.window()?.nextBaseFee, 1_015n)
    await a.indexer.stop()
    await b.indexer.stop()
  })

  it('a follower whose own head is ahead of the store keeps looking until the leader catches up', async () => {
    const follower = instance(stores.feeHistory, false)
    const leader = instance(stores.feeHistory, true)
    // the follower hears of head 20 first; the leader only later
    follower.announce(20)
    follower.indexer.start()
    leader.indexer.start()
    await until(() => leader.indexer.window() !== undefined, 'the leader loaded')
    leader.announce(20)
    await until(() => follower.indexer.window()?.head === 20, 'the follower at head 20 without another head')
    await follower.indexer.stop()
    await leader.indexer.stop()
  })

  it('a follower drops the blocks a rewind left as its own tracker announces it, and takes the store only once the indexer agrees', async () => {
    const reads = { count: 0 }
    const counted = countingReads(stores.feeHistory, reads)
    const leader = instance(stores.feeHistory, true)
    const follower = instance(counted, false)
    leader.indexer.start()
    follower.indexer.start()
    for (const number of [11, 12, 13]) {
      leader.announce(number)
      follower.announce(number)
    }
    await until(() => leader.indexer.window()?.head === 13, 'the leader at 13')
    await until(() => follower.indexer.window()?.head === 13, 'the follower at 13')

    // the follower's tracker sees the rewind to 11 first: 12 and 13 leave its window at once
    follower.fork(12, 11)
    const trimmed = follower.indexer.window()
    assert.deepEqual(
      trimmed?.blocks.map((block) => block.number),
      [6, 7, 8, 9, 10, 11],
    )
    assert.equal(trimmed?.head, 11)
    assert.equal(trimmed?.nextBaseFee, 1_012n, "block 12's base fee, which follows from block 11 alone")
    // the store still ends at 13 (the leader has not heard of the rewind): read again and again, not taken
    const readsThen = reads.count
    await until(() => reads.count >= readsThen + 3, 'the follower reading the store again')
    assert.equal(follower.indexer.window()?.head, 11, 'the stored 13 is above its own head')
    assert.deepEqual(follower.indexer.window()?.blocks, trimmed?.blocks)

    // the leader rewinds too; then a block on the new branch
    leader.fork(12, 11)
    await until(() => leader.indexer.window()?.head === 11, 'the leader at 11')
    leader.announce(12)
    follower.announce(12)
    await until(() => leader.indexer.window()?.head === 12, 'the leader at the new 12')
    await until(() => follower.indexer.window()?.head === 12, 'the follower at the new 12')
    assert.deepEqual(follower.indexer.window()?.blocks, leader.indexer.window()?.blocks)
    await follower.indexer.stop()
    await leader.indexer.stop()
  })

  it("a follower does not take a stored head of another branch than its chain's: after a reorg it waits for the indexer's", async () => {
    const reads = { count: 0 }
    const leader = instance(stores.feeHistory, true)
    const follower = instance(countingReads(stores.feeHistory, reads), false)
    leader.indexer.start()
    follower.indexer.start()
    for (const number of [11, 12, 13]) {
      leader.announce(number)
      follower.announce(number)
    }
    await until(() => follower.indexer.window()?.head === 13, 'the follower at 13')
    // a reorg of 13 on the follower's tracker: 13 leaves, the other 13 comes; the store still has the old one
    follower.fork(13, 13)
    assert.equal(follower.indexer.window()?.head, 12, 'the old 13 left at once')
    const readsThen = reads.count
    await until(() => reads.count >= readsThen + 3, 'the follower reading the store again')
    assert.equal(follower.indexer.window()?.head, 12, "the stored 13 is not its chain's 13")
    leader.fork(13, 13)
    await until(() => follower.indexer.window()?.head === 13, "the follower at the indexer's new 13")
    assert.deepEqual(follower.indexer.window()?.blocks, leader.indexer.window()?.blocks)
    await follower.indexer.stop()
    await leader.indexer.stop()
  })

  it('a read of the store under way when the chain leaves blocks is not taken', async () => {
    const leader = instance(stores.feeHistory, true)
    let gate: Promise<void> | undefined
    let open = () => {}
    const stalled = { reads: 0, done: 0 }
    const follower = instance(
      {
        ...stores.feeHistory,
        async getNextBaseFee(id) {
          if (gate) {
            stalled.reads++
            await gate
          }
          const next = await stores.feeHistory.getNextBaseFee(id)
          if (gate) stalled.done++
          return next
        },
      },
      false,
    )
    leader.indexer.start()
    follower.indexer.start()
    for (const number of [11, 12, 13]) {
      leader.announce(number)
      follower.announce(number)
    }
    await until(() => follower.indexer.window()?.head === 13, 'the follower at 13')
    leader.announce(14)
    await until(() => leader.indexer.window()?.head === 14, 'the leader at 14')
    gate = new Promise((resolve) => {
      open = resolve
    })
    // the follower's read for 14 stops inside the store; meanwhile its tracker rewinds to 13
    follower.announce(14)
    await until(() => stalled.reads === 1, "the follower's read under way")
    follower.fork(14, 13)
    open()
    await until(() => stalled.done >= 1, 'the read done')
    const readsThen = stalled.done
    await until(() => stalled.done >= readsThen + 2, 'the follower reading the store again')
    assert.equal(follower.indexer.window()?.head, 13, 'the stored 14, read before the rewind, is not taken')
    await follower.indexer.stop()
    await leader.indexer.stop()
  })

  it('says it took the lead at info where instances compete for it, at debug alone on its database (SQLite)', async () => {
    for (const sole of [undefined, true] as const) {
      const lines: { level: number; msg: string }[] = []
      const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
      const { indexer } = instance(stores.feeHistory, true, { sole, logger })
      indexer.start()
      await until(() => indexer.window() !== undefined, 'the first pass')
      await indexer.stop()
      const leads = lines.filter((line) => line.msg === 'this instance indexes the fee history of the chain')
      assert.deepEqual(
        leads.map((line) => line.level),
        [sole ? 20 : 30],
      )
    }
  })
})
