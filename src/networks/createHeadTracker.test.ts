import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers, type FakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { Upstream } from '../upstreams/createUpstream.ts'
import { createUpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import type { HeadEvent, Header } from './createHeadChain.ts'
import { createHeadTracker } from './createHeadTracker.ts'
import { quickPollMs } from './createPollRhythm.ts'
import type { HeadTracker } from './HeadTracker.ts'

const pollMs = 1_000
const hash = (number: number) => `0x${number.toString(16).padStart(64, '0')}`

/** Block `number` as eth_getBlockByNumber(number, false) answers it (a block every `blockSeconds`). */
function block(number: number, blockSeconds = 1): Header {
  return {
    hash: hash(number),
    parentHash: hash(number - 1),
    number: `0x${number.toString(16)}`,
    gasLimit: '0x1c9c380',
    gasUsed: '0x5208',
    timestamp: `0x${(1_000 + number * blockSeconds).toString(16)}`,
    baseFeePerGas: '0x7',
    size: '0x267',
    uncles: [],
    transactions: [`0x${'ab'.repeat(32)}`],
  }
}

/** The same block as geth's newHeads sends it: the header fields only, in another order. */
function gethHeader(number: number): Header {
  const { size, uncles, transactions, hash: blockHash, ...header } = block(number)
  return { ...header, hash: blockHash }
}

/** A node over HTTP at block `latest` (finalized 10 behind); `down` refuses; records each call. */
function fakeNode(label: string) {
  const node = { latest: 1, down: false, calls: [] as string[], blockSeconds: 1 }
  // a cast: the test needs post() only, whatever else the request path's Upstream grows
  const upstream = {
    label,
    async post(body) {
      const { method, params } = JSON.parse(body.toString()) as { method: string; params: [string, boolean] }
      node.calls.push(`${method} ${params[0]}`)
      if (node.down) throw new Error('connect ECONNREFUSED')
      const tag = params[0]
      const number =
        method === 'eth_getBlockByHash'
          ? Number(tag)
          : tag === 'latest'
            ? node.latest
            : tag === 'finalized'
              ? Math.max(0, node.latest - 10)
              : Number(tag)
      // a block above its head it does not have (after a rewind, say)
      const result = number > node.latest ? null : block(number, node.blockSeconds)
      return { status: 200, body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result })) }
    },
    dispatch() {
      throw new Error('not used')
    },
    close: async () => undefined,
  } as Upstream
  /** The head requests it was sent (eth_getBlockByNumber latest). */
  const headPolls = () => node.calls.filter((call) => call === 'eth_getBlockByNumber latest').length
  return { node, upstream, headPolls }
}

/** A member's WebSocket whose newHeads notifications the test sends. */
function fakeSocket() {
  const state: {
    connected: boolean
    subscriptions: unknown[][]
    notify: (result: unknown) => void
    resubscribed: () => void
  } = { connected: true, subscriptions: [], notify: () => undefined, resubscribed: () => undefined }
  const socket: UpstreamSocket = {
    request: () => Promise.reject(new Error('not used')),
    subscribe(params, onNotification, onResubscribed) {
      state.subscriptions.push(params)
      state.notify = onNotification
      state.resubscribed = onResubscribed ?? (() => undefined)
      return () => undefined
    },
    connected: () => state.connected,
    close: () => undefined,
  }
  return { socket, state }
}

const node = <T>(list: readonly T[], index: number) => list[index] as T

function setUp(members: { ws: boolean }[]) {
  const timers: FakeTimers = createFakeTimers()
  const nodes = members.map((_, index) => fakeNode(`node${index}`))
  const sockets = members.map(() => fakeSocket())
  const realPool = createUpstreamPool(
    nodes.map((each) => each.upstream),
    {
      timeoutMs: 5_000,
      attemptTimeoutMs: 1_000,
      maxAttempts: 2,
      maxLagBlocks: 2,
      breakerFailures: 3,
      breakerCooldownMs: 60_000,
      breakerMaxCooldownMs: 60_000,
      hedge: undefined,
      now: timers.now,
      timers,
    },
  )
  // the pool's health and ranking are the real ones; blocks to fill gaps come from the first node up
  const pool = {
    ...realPool,
    send: async (body: string) =>
      (await (nodes.find((each) => !each.node.down) ?? node(nodes, 0)).upstream.post(body)).body,
  }
  let opened = 0
  const tracker: HeadTracker = createHeadTracker(pool, {
    wsUrls: members.map((member, index) => (member.ws ? `ws://node${index}` : undefined)),
    pollMs,
    timeoutMs: 1_000,
    maxLagBlocks: 2,
    requestTimeoutMs: 1_000,
    now: timers.now,
    timers,
    openSocket: () => (sockets[opened++] as ReturnType<typeof fakeSocket>).socket,
  })
  const events: HeadEvent[] = []
  tracker.subscribe((event) => events.push(event))
  const heads = () => events.filter((event) => event.kind === 'head').map((event) => event.header)
  return { timers, nodes, sockets, pool, tracker, events, heads }
}

describe('createHeadTracker', () => {
  it('a member with a WebSocket: heads by newHeads relayed as sent, gaps shaped like them, one poll per pollMs', async () => {
    const { timers, nodes, sockets, tracker, heads } = setUp([{ ws: true }])
    const { node: http, headPolls } = node(nodes, 0)
    const { state } = node(sockets, 0)
    assert.deepEqual(state.subscriptions, [['newHeads']])
    // the start: one poll anchors the chain
    await tracker.poll()
    assert.equal(headPolls(), 1)

    http.latest = 2
    state.notify(gethHeader(2))
    http.latest = 5
    state.notify(gethHeader(5))
    for (let number = 6; number <= 12; number++) {
      await timers.advance(pollMs / 2)
      http.latest = number
      state.notify(gethHeader(number))
    }
    await timers.advance(pollMs / 2)
    assert.deepEqual(
      heads(),
      Array.from({ length: 11 }, (_, index) => gethHeader(index + 2)),
    )
    // 4 pollMs of heads every half pollMs: polled once per pollMs all the same (a rewind sends no notification)
    assert.equal(headPolls(), 5)
    assert.deepEqual(tracker.latest(), { number: 12n, gasLimit: 0x1c9c380n })
    tracker.close()
  })

  it('notifications that are not blocks are ignored, never thrown', async () => {
    const { timers, sockets, tracker, heads } = setUp([{ ws: true }])
    const { state } = node(sockets, 0)
    await tracker.poll()
    for (const garbage of [null, 7, 'x', {}, { number: 'abc', hash: hash(2) }, { number: '0x' }])
      state.notify(garbage)
    state.notify({ ...gethHeader(2), gasLimit: '0xzz' })
    await timers.advance(0)
    assert.deepEqual(heads(), [{ ...gethHeader(2), gasLimit: '0xzz' }])
    assert.deepEqual(
      tracker.latest(),
      { number: 2n, gasLimit: 0x1c9c380n },
      'the head moves on; its gas limit that does not read as a number is not taken',
    )
    tracker.close()
  })

  it('a subscribed member is polled while its socket is down, and once after it subscribed again', async () => {
    const { timers, nodes, sockets, tracker, heads } = setUp([{ ws: true }])
    const { node: http, headPolls } = node(nodes, 0)
    const { state } = node(sockets, 0)
    await tracker.poll()
    state.notify(gethHeader(1))
    state.connected = false
    http.latest = 3
    await timers.advance(pollMs)
    assert.equal(headPolls(), 2)
    http.latest = 4
    await timers.advance(pollMs)
    assert.equal(headPolls(), 3)
    state.connected = true
    state.resubscribed()
    await timers.advance(0)
    assert.equal(headPolls(), 4)
    assert.deepEqual(
      heads().map((header) => Number(header.number)),
      [2, 3, 4],
    )
    // fetched blocks are shaped like the node's own notifications
    assert.deepEqual(Object.keys(node(heads(), 0)), Object.keys(gethHeader(1)))
    tracker.close()
  })

  it('members without a WebSocket: one head poll each per pollMs, blocks as the node returned them', async () => {
    const { timers, nodes, tracker, heads } = setUp([{ ws: false }, { ws: false }])
    for (const { node: http } of nodes) http.latest = 1
    await timers.advance(pollMs)
    for (const { node: http } of nodes) http.latest = 3
    await timers.advance(pollMs)
    await timers.advance(pollMs)
    assert.deepEqual(
      nodes.map(({ headPolls }) => headPolls()),
      [3, 3],
    )
    assert.deepEqual(heads(), [block(2), block(3)])
    tracker.close()
  })

  it('health: a failed poll opens the breaker; a subscribed member out of use is polled until one answers', async () => {
    const { timers, nodes, sockets, pool, tracker } = setUp([{ ws: true }, { ws: false }])
    const [first, second] = pool.members
    const { node: http, headPolls } = node(nodes, 0)
    const { state } = node(sockets, 0)
    http.down = true
    await tracker.poll()
    assert.equal(first?.breaker.state, 'open')
    assert.equal(second?.breaker.state, 'closed')
    // its newHeads keep coming: they set its head, not its health
    for (let number = 2; number <= 4; number++) {
      state.notify(gethHeader(number))
      await timers.advance(pollMs)
    }
    assert.equal(first?.head, 4n)
    assert.equal(first?.breaker.state, 'open')
    assert.equal(headPolls(), 4, 'polled on every round while out of use')
    http.down = false
    http.latest = 5
    state.notify(gethHeader(5))
    await timers.advance(pollMs)
    assert.equal(first?.breaker.state, 'closed')
    const polls = headPolls()
    for (let number = 6; number <= 9; number++) {
      state.notify(gethHeader(number))
      await timers.advance(pollMs / 2)
    }
    assert.equal(
      headPolls(),
      polls + 2,
      'well again, with heads coming: polled once per pollMs, not every round',
    )
    tracker.close()
  })

  it('a head poll that answers decays an error rate, so a member put behind can come back', async () => {
    const { nodes, pool, tracker } = setUp([{ ws: false }])
    const member = node([...pool.members], 0)
    while (!member.isDegraded()) member.recordFailure('test: failed', 'degraded')
    const before = member.errorRate
    await tracker.poll()
    await tracker.poll()
    await tracker.poll()
    assert.ok(Math.abs(member.errorRate - before * 0.95 ** 3) < 1e-12, `${member.errorRate}`)
    assert.equal(member.isDegraded(), false)
    assert.equal(node(nodes, 0).headPolls(), 3)
    tracker.close()
  })

  it('finalized: asked when the head moved, at most once per pollMs', async () => {
    const { timers, nodes, sockets, tracker } = setUp([{ ws: true }])
    const { node: http } = node(nodes, 0)
    const { state } = node(sockets, 0)
    const finalizedCalls = () => http.calls.filter((call) => call.endsWith('finalized')).length
    http.latest = 20
    await tracker.poll()
    assert.equal(tracker.finalized(), 10n)
    assert.equal(finalizedCalls(), 1)
    for (let number = 21; number <= 30; number++) {
      http.latest = number
      state.notify(gethHeader(number))
      await timers.advance(pollMs / 4)
    }
    assert.equal(finalizedCalls(), 2, 'ten heads in 2.5 pollMs: asked once more (every 2 pollMs at most)')
    assert.ok((tracker.finalized() ?? 0n) >= 17n)
    for (let round = 0; round < 4; round++) await timers.advance(pollMs)
    assert.equal(finalizedCalls(), 3, 'once more for the last head, then not while the head stays')
    tracker.close()
  })
  it('a rewind: a lower head no member in use is above is the chain going back; a lagging leader is not', async () => {
    const { timers, nodes, tracker, events } = setUp([{ ws: false }, { ws: false }])
    for (const { node: http } of nodes) http.latest = 10
    await tracker.poll()
    await timers.advance(0)
    assert.equal(tracker.latest()?.number, 10n)
    // the first member (the leader) goes back; the second is still at 10: the leader lags
    node(nodes, 0).node.latest = 7
    await timers.advance(pollMs)
    assert.equal(tracker.latest()?.number, 10n)
    assert.equal(events.length, 0)
    // both are at 7 now: the chain itself went back
    node(nodes, 1).node.latest = 7
    await timers.advance(pollMs)
    assert.equal(tracker.latest()?.number, 7n)
    assert.deepEqual(
      events.map((event) =>
        event.kind === 'fork'
          ? `fork ${event.from}`
          : `${event.kind} ${'header' in event ? Number(event.header.number) : ''}`,
      ),
      ['fork 8', 'dropped 10', 'dropped 9', 'dropped 8'],
    )
    assert.equal(tracker.stats.forks, 1)
    tracker.close()
  })

  it('finalized goes back below a fork that reached it', async () => {
    const { timers, nodes, tracker } = setUp([{ ws: false }])
    const { node: http } = node(nodes, 0)
    http.latest = 30
    await tracker.poll()
    assert.equal(tracker.finalized(), 20n)
    http.latest = 15
    await timers.advance(pollMs)
    assert.equal(tracker.latest()?.number, 15n)
    assert.ok((tracker.finalized() ?? 0n) <= 15n, `${tracker.finalized()}`)
    assert.equal(tracker.stats.pastFinality, 1)
    tracker.close()
  })
  it('a lagging member is not taken for a rewind when the members ahead of it go out of use', async () => {
    const { timers, nodes, pool, tracker, events } = setUp([{ ws: false }, { ws: false }])
    node(nodes, 0).node.latest = 10
    node(nodes, 1).node.latest = 7
    await tracker.poll()
    await timers.advance(0)
    assert.equal(tracker.latest()?.number, 10n)
    // the member at the tip stops answering: the one at 7 leads, and is the only one in use
    node(nodes, 0).node.down = true
    await timers.advance(pollMs)
    assert.equal(node([...pool.members], 0).breaker.state, 'open')
    await timers.advance(pollMs)
    assert.equal(tracker.latest()?.number, 10n)
    assert.equal(events.length, 0)
    // it catches up: the chain goes on from the tip
    node(nodes, 1).node.latest = 12
    await timers.advance(pollMs)
    assert.equal(tracker.latest()?.number, 12n)
    assert.deepEqual(
      events.map((event) => event.kind),
      ['head', 'head'],
    )
    tracker.close()
  })

  it('members without a WebSocket on 2 s blocks: the leader polled around the moment each is due, the others once per pollMs', async () => {
    const { timers, nodes, tracker, events } = setUp([{ ws: false }, { ws: false }])
    const [leader, other] = [node(nodes, 0), node(nodes, 1)]
    for (const { node: http } of nodes) http.blockSeconds = 2
    /** When the nodes have block `number`: every 2 s, off the pollMs grid. */
    const arrival = (number: number) => 300 + number * 2_000
    const seenAt = new Map<number, number>()
    tracker.subscribe((event) => {
      if (event.kind === 'head') seenAt.set(Number(event.header.number), timers.now())
    })
    const pollsAt = new Map<number, [number, number]>()
    for (let number = 1; number <= 20; number++) {
      while (timers.now() < arrival(number)) await timers.advance(5)
      for (const { node: http } of nodes) http.latest = number
      pollsAt.set(number, [leader.headPolls(), other.headPolls()])
    }
    await timers.advance(2_000)
    const late = Array.from({ length: 10 }, (_, index) => {
      const number = index + 10
      return (seenAt.get(number) as number) - arrival(number)
    })
    assert.ok(
      late.every((ms) => ms <= quickPollMs),
      `ms after the node had each block: ${late.join(' ')}`,
    )
    const [leaderAt10, otherAt10] = pollsAt.get(10) as [number, number]
    const [leaderAt20, otherAt20] = pollsAt.get(20) as [number, number]
    assert.ok(leaderAt20 - leaderAt10 <= 4 * 10, `the leader: ${leaderAt20 - leaderAt10} polls in 10 blocks`)
    assert.ok(otherAt20 - otherAt10 <= 2 * 10 + 1, `the other: ${otherAt20 - otherAt10} polls in 10 blocks`)
    assert.equal(events.filter((event) => event.kind !== 'head').length, 0)
    tracker.close()
  })
})
