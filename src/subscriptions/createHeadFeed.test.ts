import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import { createHeadFeed, type HeadEvent, type Header, type HeadFeed } from './createHeadFeed.ts'

const hash = (number: number) => `0x${number.toString(16).padStart(64, '0')}`

/** Block `number` as eth_getBlockByNumber(number, false) answers it. */
function block(number: number): Header {
  return {
    hash: hash(number),
    parentHash: hash(number - 1),
    miner: `0x${'11'.repeat(20)}`,
    number: `0x${number.toString(16)}`,
    gasUsed: '0x5208',
    timestamp: `0x${(1_000 + number).toString(16)}`,
    baseFeePerGas: '0x7',
    totalDifficulty: '0x0',
    size: '0x267',
    uncles: [],
    transactions: [`0x${'ab'.repeat(32)}`],
    withdrawals: [],
  }
}

/** The same block as geth's newHeads sends it: the header fields only, in another order. */
function gethHeader(number: number): Header {
  const { size, totalDifficulty, uncles, transactions, withdrawals, ...header } = block(number)
  const { hash: _hash, ...rest } = header
  return { ...rest, hash: header.hash }
}

/** A pool whose node is at `latest`, answering eth_getBlockBy* from block(); records each call. */
function fakePool() {
  const calls: string[] = []
  const node = { latest: 1 }
  const pool: UpstreamPool = {
    members: [],
    async send(body) {
      const { method, params } = JSON.parse(body) as { method: string; params: [string, boolean] }
      calls.push(`${method} ${params[0]}`)
      const number =
        method === 'eth_getBlockByHash'
          ? Number(params[0])
          : params[0] === 'latest'
            ? node.latest
            : Number(params[0])
      return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: block(number) }))
    },
    head: () => undefined,
    noteHead: () => undefined,
    noteProbeFailure: () => undefined,
    isReachable: () => true,
    close: async () => undefined,
  }
  return { pool, calls, node }
}

/** An upstream WebSocket whose newHeads notifications the test sends. */
function fakeSocket() {
  let listener: ((result: unknown) => void) | undefined
  const socket: UpstreamSocket = {
    request: () => Promise.reject(new Error('not used')),
    subscribe(_params, onNotification) {
      listener = onNotification
      return () => {
        listener = undefined
      }
    },
    close: () => undefined,
  }
  return { socket, notify: (result: unknown) => listener?.(result) }
}

/**
 * Subscribes to the feed; `until(count)` resolves once that many events have come, and fails after
 * 5 s (its timer also keeps the process up while the feed's own, unref'd, poll timer is all there is).
 */
function listen(feed: HeadFeed) {
  const events: HeadEvent[] = []
  const waiting: { count: number; resolve: () => void }[] = []
  feed.subscribe((event) => {
    events.push(event)
    for (const waiter of waiting) if (events.length >= waiter.count) waiter.resolve()
  })
  const until = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${count} events`)), 5_000)
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      if (events.length >= count) done()
      else waiting.push({ count, resolve: done })
    })
  return { events, until }
}

const log = pino({ level: 'silent' })
const heads = (events: HeadEvent[]) =>
  events.filter((event) => event.kind === 'head').map((event) => event.header)

describe('createHeadFeed', () => {
  it("relays the node's own newHeads objects, and shapes the blocks it fetched to fill a gap like them", async () => {
    const { pool, calls } = fakePool()
    const { socket, notify } = fakeSocket()
    const feed = createHeadFeed({ pool, socket, pollMs: 60_000, log })
    const { events, until } = listen(feed)
    notify(gethHeader(1))
    notify(gethHeader(4))
    await until(3)
    feed.close()

    assert.deepEqual(heads(events), [gethHeader(2), gethHeader(3), gethHeader(4)])
    for (const header of heads(events)) assert.deepEqual(Object.keys(header), Object.keys(gethHeader(1)))
    assert.ok(calls.includes('eth_getBlockByNumber 0x2') && calls.includes('eth_getBlockByNumber 0x3'))
  })

  it('keeps every field a node puts in its newHeads objects (anvil sends the whole block)', async () => {
    const { pool } = fakePool()
    const { socket, notify } = fakeSocket()
    const feed = createHeadFeed({ pool, socket, pollMs: 60_000, log })
    const { events, until } = listen(feed)
    notify(block(1))
    notify(block(3))
    await until(2)
    feed.close()

    assert.deepEqual(heads(events), [block(2), block(3)])
  })

  it('polling: with no upstream subscription to learn from, blocks go out as the node returned them', async () => {
    const { pool, node } = fakePool()
    // the first poll (made at once) anchors the chain at block 1; the next sees block 4
    const feed = createHeadFeed({ pool, socket: undefined, pollMs: 5, log })
    const { events, until } = listen(feed)
    node.latest = 4
    await until(3)
    feed.close()

    assert.deepEqual(heads(events), [block(2), block(3), block(4)])
  })
})
