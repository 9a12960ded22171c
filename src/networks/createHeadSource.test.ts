import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { Upstream } from '../upstreams/createUpstream.ts'
import { createUpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { HeadEvent, Header } from './createHeadChain.ts'
import type { HeadFleet } from './createHeadSource.ts'
import { createHeadTracker } from './createHeadTracker.ts'
import type { HeadReport } from './HeadReport.ts'

// A head tracker in a fleet (a fake one: what createFleetHeads does through Redis is its own test and
// test/fleetHeads.e2e.test.ts's): the lease holder polls and reports, a follower takes the reports.

const pollMs = 1_000
const hash = (number: number, branch = 0) => `0x${(number + branch * 0x1000).toString(16).padStart(64, '0')}`

/** Block `number` of branch `branch` (its parent on the same branch down to `forkAt`, then branch 0's). */
function block(number: number, branch = 0, forkAt = 0): Header {
  return {
    hash: hash(number, branch),
    parentHash: hash(number - 1, number - 1 >= forkAt ? branch : 0),
    number: `0x${number.toString(16)}`,
    gasLimit: '0x1c9c380',
  }
}

/** A node over HTTP at block `latest` of branch 0 (finalized 10 behind); records each call. */
function fakeNode() {
  const node = { latest: 1, calls: [] as string[] }
  const upstream = {
    label: 'node',
    async post(body) {
      const { method, params } = JSON.parse(body.toString()) as { method: string; params: [string, boolean] }
      node.calls.push(`${method} ${params[0]}`)
      const tag = params[0]
      const number =
        tag === 'latest' ? node.latest : tag === 'finalized' ? Math.max(0, node.latest - 10) : Number(tag)
      const result = number > node.latest ? null : block(number)
      return { status: 200, body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result })) }
    },
    dispatch() {
      throw new Error('not used')
    },
    close: async () => undefined,
  } as Upstream
  const headPolls = () => node.calls.filter((call) => call === 'eth_getBlockByNumber latest').length
  return { node, upstream, headPolls }
}

function fakeFleet() {
  const state = { leads: false, connected: true, closed: false, reports: [] as HeadReport[] }
  const listeners = new Set<(report: HeadReport) => void>()
  const fleet: HeadFleet = {
    leads: () => state.leads,
    connected: () => state.connected,
    report: (report) => state.reports.push(report),
    onReport(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    close() {
      state.closed = true
    },
  }
  const tell = (report: HeadReport) => {
    for (const listener of listeners) listener(report)
  }
  return { fleet, state, tell }
}

function setUp(memberKeys = ['node-a']) {
  const timers = createFakeTimers()
  const nodes = memberKeys.map(() => fakeNode())
  const http = nodes[0] as ReturnType<typeof fakeNode>
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
  const pool = { ...realPool, send: async (body: string) => (await http.upstream.post(body)).body }
  const { fleet, state, tell } = fakeFleet()
  const tracker = createHeadTracker(pool, {
    wsUrls: memberKeys.map(() => undefined),
    pollMs,
    timeoutMs: 1_000,
    maxLagBlocks: 2,
    requestTimeoutMs: 1_000,
    now: timers.now,
    timers,
    fleet,
    memberKeys,
  })
  const events: HeadEvent[] = []
  tracker.subscribe((event) => events.push(event))
  const heads = () => events.flatMap((event) => (event.kind === 'head' ? [Number(event.header.number)] : []))
  return { timers, http, nodes, pool, tracker, state, tell, events, heads }
}

const reportOf = (header: Header, members: [string, bigint][], goesBack = false): HeadReport => ({
  header,
  goesBack,
  finalized: BigInt(header.number) - 10n,
  genesis: undefined,
  gasLimit: 30_000_000n,
  members: new Map(members),
})

describe('a head tracker in a fleet', () => {
  it('a follower takes the holder reports (gaps fetched from the node) and polls nothing on the rhythm', async () => {
    const { timers, http, pool, tracker, tell, heads, state } = setUp()
    http.node.latest = 20
    await tracker.poll()
    const polls = http.headPolls()
    http.node.latest = 24
    tell(reportOf(block(21), [['node-a', 21n]]))
    await timers.advance(pollMs)
    tell(reportOf(block(24), [['node-a', 24n]]))
    for (let round = 0; round < 5; round++) await timers.advance(pollMs)
    assert.deepEqual(heads(), [21, 22, 23, 24], 'the reported heads, the gap between them fetched')
    assert.equal(http.headPolls(), polls, 'no head poll while the holder vouches for the member')
    assert.equal(pool.membersHead(), 24n, "the member's head as the holder saw it (lag routing)")
    assert.equal(tracker.finalized(), 14n)
    assert.deepEqual(tracker.latest(), { number: 24n, gasLimit: 30_000_000n })
    assert.deepEqual(state.reports, [], 'a follower reports nothing')
    tracker.close()
    assert.equal(state.closed, true)
  })

  it('a follower polls a member the holder does not vouch for (its head only: the chain follows the reports)', async () => {
    const { timers, nodes, tracker, tell, heads, pool } = setUp(['node-a', 'node-b'])
    await tracker.poll()
    const polls = nodes.map((each) => each.headPolls())
    for (const each of nodes) each.node.latest = 3
    tell(reportOf(block(2), [['node-a', 2n]]))
    await timers.advance(pollMs)
    await timers.advance(pollMs)
    assert.deepEqual(
      nodes.map((each, index) => each.headPolls() - (polls[index] ?? 0)),
      [0, 2],
    )
    assert.deepEqual(heads(), [2])
    assert.deepEqual(
      pool.members.map((member) => member.head),
      [2n, 3n],
    )
    tracker.close()
  })

  it('an instance the holder reaches none of whose upstreams polls its own, as without a fleet', async () => {
    const { timers, http, tracker, tell, heads } = setUp()
    await tracker.poll()
    const polls = http.headPolls()
    http.node.latest = 3
    tell(reportOf(block(2), [['another-node', 2n]]))
    await timers.advance(pollMs)
    await timers.advance(pollMs)
    assert.equal(http.headPolls(), polls + 2)
    assert.deepEqual(heads(), [2, 3], 'its own heads, not the report')
    tracker.close()
  })

  it('a rewind the holder reports (goesBack) is checked with the node and followed', async () => {
    const { timers, http, tracker, tell, events } = setUp()
    http.node.latest = 20
    await tracker.poll()
    tell(reportOf(block(21), [['node-a', 21n]]))
    http.node.latest = 21
    await timers.advance(0)
    http.node.latest = 18
    tell(reportOf(block(18), [['node-a', 18n]], true))
    await timers.advance(0)
    const fork = events.find((event) => event.kind === 'fork')
    assert.deepEqual(fork, {
      kind: 'fork',
      from: 19n,
      to: 18n,
      before: 21n,
      deeper: false,
      pastFinality: false,
    })
    assert.deepEqual(
      events.flatMap((event) => (event.kind === 'dropped' ? [Number(event.header.number)] : [])),
      [21, 20, 19],
    )
    assert.equal(tracker.header()?.hash, block(18).hash)
    tracker.close()
  })

  it('the holder polls on the rhythm and reports each head, its members and finalized, nothing twice', async () => {
    const { timers, http, tracker, state, heads } = setUp()
    state.leads = true
    http.node.latest = 20
    await tracker.poll()
    // the block the chain starts at, with what the round learned beside it
    assert.equal(state.reports.length, 1)
    assert.deepEqual(state.reports[0], {
      header: block(20),
      goesBack: false,
      finalized: 10n,
      genesis: block(0).hash,
      gasLimit: 30_000_000n,
      members: new Map([['node-a', 20n]]),
    })
    await timers.advance(pollMs)
    await timers.advance(pollMs)
    assert.equal(state.reports.length, 1, 'nothing new: nothing sent')
    http.node.latest = 21
    await timers.advance(pollMs)
    assert.deepEqual(heads(), [21])
    assert.equal(http.headPolls(), 4)
    assert.deepEqual(
      state.reports
        .slice(1)
        .map((report) => [report.header.number, report.members.get('node-a'), report.finalized]),
      [
        ['0x15', 21n, 10n],
        // with the finalized block the round asked for after it
        ['0x15', 21n, 11n],
      ],
    )

    // blocks the poll skipped are fetched by the holder's chain and reported, each one: the
    // followers need not fetch them too
    const reported = state.reports.length
    http.node.latest = 24
    await timers.advance(pollMs)
    assert.deepEqual(heads(), [21, 22, 23, 24])
    assert.deepEqual(
      state.reports.slice(reported).map((report) => [Number(report.header.number), report.goesBack]),
      [
        // the round's news (its member at 24) while the chain still links the blocks it skipped
        [21, false],
        [22, false],
        [23, false],
        [24, false],
      ],
    )
    // a rewind: the new tip, going back
    const beforeRewind = state.reports.length
    http.node.latest = 22
    await timers.advance(pollMs)
    assert.deepEqual(
      state.reports.slice(beforeRewind).map((report) => [Number(report.header.number), report.goesBack]),
      [
        [22, true],
        [22, true],
      ],
    )
    tracker.close()
  })

  it('a follower that takes the lease, or loses Redis, polls at the next round (Redis away: without reporting)', async () => {
    const { timers, http, tracker, tell, state, heads } = setUp()
    http.node.latest = 20
    await tracker.poll()
    tell(reportOf(block(20), [['node-a', 20n]]))
    await timers.advance(pollMs)
    const polls = http.headPolls()
    state.connected = false
    http.node.latest = 21
    await timers.advance(pollMs)
    assert.equal(http.headPolls(), polls + 1)
    assert.deepEqual(heads(), [21])
    assert.equal(state.reports.length, 0, 'not the holder: nothing reported')
    state.connected = true
    state.leads = true
    http.node.latest = 22
    await timers.advance(pollMs)
    assert.equal(http.headPolls(), polls + 2)
    assert.deepEqual(heads(), [21, 22])
    assert.deepEqual(
      state.reports.map((report) => report.header.number),
      ['0x16'],
    )
    // reports heard while polling are not taken
    tell(reportOf(block(30), [['node-a', 30n]]))
    await timers.advance(0)
    assert.deepEqual(heads(), [21, 22])
    tracker.close()
  })
})
