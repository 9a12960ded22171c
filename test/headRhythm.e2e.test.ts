import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { HeadEvent } from '../src/networks/createHeadChain.ts'
import { createHeadTracker } from '../src/networks/createHeadTracker.ts'
import { quickPollMs } from '../src/networks/createPollRhythm.ts'
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

  /** How long after anvil announced it each judged block was a head of `tracker`'s chain, ms. */
  function lateness(tracker: ReturnType<typeof trackHeads>): number[] {
    return Array.from({ length: judgedBlocks }, (_, index) => {
      const number = first + 1 + index
      return (tracker.seenAt.get(number) as number) - (reference.heardAt.get(number) as number)
    })
  }

  it('over HTTP only: most blocks seen before the second quick poll after the node had them, at most twice the fixed poll', (t) => {
    const late = lateness(overHttp)
    const soon = late.filter((ms) => ms <= 2 * quickPollMs).length
    // the fixed poll alone sees a block a uniform 0 to pollMs after it came: ~1 in 10 this soon
    assert.ok(soon >= (judgedBlocks * 3) / 4, `ms late: ${late.map(Math.round).join(' ')}`)
    const perBlock = overHttp.pollsBetween(first, first + judgedBlocks) / judgedBlocks
    t.diagnostic(`ms late: ${late.map(Math.round).join(' ')}; ${perBlock} polls a block`)
    assert.ok(perBlock <= 2 * ((blockSeconds * 1_000) / pollMs), `${perBlock} polls a block`)
  })

  it('with a WebSocket: every block heard as anvil announces it, polled no faster than pollMs', (t) => {
    const late = lateness(overWs)
    assert.ok(
      late.filter((ms) => ms <= quickPollMs).length >= (judgedBlocks * 3) / 4,
      `ms late: ${late.map(Math.round).join(' ')}`,
    )
    const perBlock = overWs.pollsBetween(first, first + judgedBlocks) / judgedBlocks
    t.diagnostic(`ms late: ${late.map(Math.round).join(' ')}; ${perBlock} polls a block`)
    assert.ok(perBlock <= (blockSeconds * 1_000) / pollMs + 0.5, `${perBlock} polls a block`)
  })
})
