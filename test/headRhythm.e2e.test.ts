import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { HeadEvent } from '../src/networks/createHeadChain.ts'
import { createHeadTracker } from '../src/networks/createHeadTracker.ts'
import type { HeadTracker } from '../src/networks/HeadTracker.ts'
import { createUpstream, type Upstream } from '../src/upstreams/createUpstream.ts'
import { createUpstreamPool } from '../src/upstreams/createUpstreamPool.ts'
import { rpcBody } from './helpers/postJson.ts'
import { until } from './helpers/until.ts'

const pollMs = 1_000
const blockSeconds = 2
/** Blocks the rhythm is given to learn, then the blocks it is judged on. */
const [learningBlocks, judgedBlocks] = [8, 12]

/** anvil's own newHeads: when this process heard of each block (the reference moment). */
async function watchNode(wsUrl: string) {
  const socket = new WebSocket(wsUrl)
  const heardAt = new Map<number, number>()
  let id: unknown
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString())
    if (message.id === 1) id = message.result
    else if (message.params?.subscription === id)
      heardAt.set(Number(message.params.result.number), performance.now())
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  await until(() => id !== undefined, 'the subscription id')
  return { heardAt, close: () => socket.close() }
}

/** A head tracker on anvil (over HTTP only, or with its WebSocket too) that counts its head polls. */
function trackHeads(anvil: Anvil, ws: boolean) {
  const node = createUpstream({ url: anvil.url }, { connections: 2, maxResponseBytes: 1 << 20 })
  const pollsAt: number[] = []
  const upstream: Upstream = {
    label: 'anvil',
    post(body, options) {
      const { params } = JSON.parse(body.toString()) as { params: unknown[] }
      if (params[0] === 'latest') pollsAt.push(performance.now())
      return node.post(body, options)
    },
    dispatch: (body, options, done) => node.dispatch(body, options, done),
    close: () => node.close(),
  }
  const pool = createUpstreamPool([upstream], {
    timeoutMs: 5_000,
    attemptTimeoutMs: 2_000,
    maxAttempts: 2,
    maxLagBlocks: 2,
    breakerFailures: 3,
    breakerCooldownMs: 5_000,
    breakerMaxCooldownMs: 5_000,
    hedge: undefined,
  })
  const tracker: HeadTracker = createHeadTracker(pool, {
    wsUrls: [ws ? anvil.wsUrl : undefined],
    pollMs,
    timeoutMs: 2_000,
    maxLagBlocks: 2,
    requestTimeoutMs: 2_000,
  })
  const seenAt = new Map<number, number>()
  tracker.subscribe((event: HeadEvent) => {
    if (event.kind === 'head') seenAt.set(Number(event.header.number), performance.now())
  })
  return {
    tracker,
    seenAt,
    /** Head polls sent after `from` and up to `to` (performance.now() moments). */
    pollsWithin: (from: number, to: number) => pollsAt.filter((at) => at > from && at <= to).length,
    /** Head polls made while blocks `from` to `to` came. */
    pollsBetween: (from: number, to: number) =>
      pollsAt.filter((at) => at > (seenAt.get(from) as number) && at <= (seenAt.get(to) as number)).length,
    close: async () => {
      tracker.close()
      await node.close()
    },
  }
}

describe('head polls on the rhythm of a chain with a block every 2 s (anvil --block-time 2)', () => {
  let anvil: Anvil
  let reference: Awaited<ReturnType<typeof watchNode>>
  let overHttp: ReturnType<typeof trackHeads>
  let overWs: ReturnType<typeof trackHeads>
  let first: number

  before(async () => {
    anvil = await startAnvil({ blockTimeSeconds: blockSeconds })
    reference = await watchNode(anvil.wsUrl)
    overHttp = trackHeads(anvil, false)
    overWs = trackHeads(anvil, true)
    await until(() => reference.heardAt.size > 0, 'a first block', 10_000)
    first = Math.min(...reference.heardAt.keys()) + learningBlocks
    const last = first + judgedBlocks
    await until(
      () => overHttp.seenAt.has(last) && overWs.seenAt.has(last) && reference.heardAt.has(last),
      `block ${last}`,
      (learningBlocks + judgedBlocks + 5) * blockSeconds * 1_000,
    )
  })

  after(async () => {
    await overHttp?.close()
    await overWs?.close()
    reference?.close()
    await anvil?.stop()
  })

  /**
   * For each judged block, the polls `tracker` sent after anvil announced the block and before its
   * chain had it: 0 or 1 when the first poll after the node had the block (or its newHeads) brought
   * it. Ordered events, not durations: how soon that poll comes is the rhythm's, proven on a fake
   * clock in src/networks/createPollRhythm.test.ts and measured by `npm run bench:workload`.
   */
  function pollsBeforeSeen(tracker: ReturnType<typeof trackHeads>): number[] {
    return Array.from({ length: judgedBlocks }, (_, index) => {
      const number = first + 1 + index
      return tracker.pollsWithin(
        reference.heardAt.get(number) as number,
        tracker.seenAt.get(number) as number,
      )
    })
  }
  /** The fixed poll's count a block: one every pollMs. */
  const fixedPerBlock = (blockSeconds * 1_000) / pollMs

  it("over HTTP only: each block brought by the first poll after the node had it; the rhythm's quick polls, at most twice the fixed poll's", (t) => {
    const polls = pollsBeforeSeen(overHttp)
    const perBlock = overHttp.pollsBetween(first, first + judgedBlocks) / judgedBlocks
    t.diagnostic(`polls after the node had each block: ${polls.join(' ')}; ${perBlock} polls a block`)
    assert.ok(polls.filter((count) => count <= 1).length >= (judgedBlocks * 3) / 4, polls.join(' '))
    // the fixed poll alone makes fixedPerBlock: more is the rhythm polling around each block's moment
    assert.ok(perBlock >= fixedPerBlock + 0.5, `${perBlock} polls a block: no quick polls`)
    assert.ok(perBlock <= 2 * fixedPerBlock, `${perBlock} polls a block`)
  })

  it('with a WebSocket: every block heard from newHeads, before any poll; polled no faster than pollMs', (t) => {
    const polls = pollsBeforeSeen(overWs)
    const perBlock = overWs.pollsBetween(first, first + judgedBlocks) / judgedBlocks
    t.diagnostic(`polls after the node had each block: ${polls.join(' ')}; ${perBlock} polls a block`)
    assert.ok(polls.filter((count) => count === 0).length >= (judgedBlocks * 3) / 4, polls.join(' '))
    assert.ok(perBlock <= fixedPerBlock + 0.5, `${perBlock} polls a block`)
  })
})
