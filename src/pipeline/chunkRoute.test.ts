import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Network } from '../networks/createNetwork.ts'
import type { Upstream, UpstreamResponse } from '../upstreams/createUpstream.ts'
import { createUpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { PoolMember } from '../upstreams/PoolMember.ts'
import { chunkRoute } from './chunkRoute.ts'
import { splitLogsRange } from './splitLogsRange.ts'

const hex = (value: bigint) => `0x${value.toString(16)}`

function logsOf(from: bigint, to: bigint) {
  const logs = []
  for (let block = from; block <= to; block++)
    logs.push({ blockNumber: hex(block), logIndex: '0x0', data: '0x' })
  return logs
}

/** proxyd's refusal of a range wider than `limit` blocks: HTTP 400, -32602. */
const proxydRefusal = (limit: bigint) => ({
  status: 400,
  body: JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32602, message: `block range greater than ${limit} max` },
    id: 1,
  }),
})

/**
 * A node with blocks `earliest`..`head` behind proxyd's range limit: it answers eth_getLogs of its
 * blocks, refuses ranges wider than `limit` as proxyd does, and answers `header not found` for blocks
 * it does not have (counted in `missed`: a chunk sent where its blocks are not).
 */
function node(label: string, earliest: bigint, head: bigint, limit: bigint) {
  const asked: [bigint, bigint][] = []
  let missed = 0
  const answer = (body: string): UpstreamResponse => {
    const { id, params } = JSON.parse(body) as {
      id: unknown
      params: [{ fromBlock: string; toBlock: string }]
    }
    const from = BigInt(params[0].fromBlock)
    const to = BigInt(params[0].toBlock)
    asked.push([from, to])
    if (to - from + 1n > limit) {
      const { status, body } = proxydRefusal(limit)
      return { status, body: Buffer.from(body) }
    }
    if (from < earliest || to > head) {
      missed++
      const error = { code: -32000, message: 'header not found' }
      return { status: 200, body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error })) }
    }
    return {
      status: 200,
      body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: logsOf(from, to) })),
    }
  }
  const upstream: Upstream = {
    label,
    async post(body) {
      return answer(body.toString())
    },
    dispatch(body, _options, done) {
      setImmediate(() => done({ response: answer(body.toString()) }))
    },
    async close() {},
  }
  return { upstream, asked, missed: () => missed }
}

const paid = {
  paysInTime: () => true,
  holdNext: async () => true,
  chargeCall() {},
  freeCall() {},
}

describe('chunkRoute', () => {
  it('pins a chunk to its own blocks; one at or below the finalized block to upstreams behind the head as well', () => {
    const call = { headSensitive: true, fromBlock: 0n, block: 199n, retry: true }
    assert.deepEqual(chunkRoute(call, 150n, 199n, 120n), { ...call, fromBlock: 150n, block: 199n })
    assert.deepEqual(chunkRoute(call, 50n, 99n, 120n), {
      ...call,
      fromBlock: 50n,
      block: 99n,
      headSensitive: false,
    })
    assert.equal(chunkRoute(call, 50n, 99n, undefined).headSensitive, true, 'no finalized block known')
    assert.equal(chunkRoute({ block: 199n }, 50n, 99n, undefined).headSensitive, false)
  })

  it('a split over a lagging and a pruned upstream sends each chunk to one that has its blocks', async () => {
    // blocks 0..199: `lagging` has 0..150 (behind the head), `pruned` 100..199 (history from 100);
    // neither has the whole range, and both refuse more than 50 blocks as proxyd does
    const lagging = node('lagging', 0n, 150n, 50n)
    const pruned = node('pruned', 100n, 199n, 50n)
    const pool = createUpstreamPool([lagging.upstream, pruned.upstream], {
      timeoutMs: 2_000,
      attemptTimeoutMs: 1_000,
      maxAttempts: 3,
      maxLagBlocks: 2,
      breakerFailures: 3,
      breakerCooldownMs: 1000,
      breakerMaxCooldownMs: 8000,
    })
    const [laggingMember, prunedMember] = pool.members as [PoolMember, PoolMember]
    laggingMember.noteProbedHead(150n)
    laggingMember.noteEarliestBlock(0n)
    prunedMember.noteProbedHead(199n)
    prunedMember.noteEarliestBlock(100n)
    const network = {
      pool,
      cache: undefined,
      head: { finalized: () => 120n },
      maxLogsResults: 10_000,
    } as unknown as Network
    // the whole range as the call routed it: no upstream has it all, the best one is asked
    const whole = {
      headSensitive: true,
      fromBlock: 0n,
      block: 199n,
      retry: true,
      deadline: performance.now() + 2_000,
    }
    const refusal = Buffer.from(proxydRefusal(50n).body)
    const answer = await splitLogsRange(
      network,
      { filter: {}, first: 0n, last: 199n },
      refusal,
      1,
      whole,
      paid,
    )
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 1, result: logsOf(0n, 199n) }))
    assert.equal(lagging.missed() + pruned.missed(), 0, 'no chunk went where its blocks are not')
    const firsts = (asked: [bigint, bigint][]) => asked.map(([from]) => from).sort((a, b) => Number(a - b))
    assert.deepEqual(
      firsts(lagging.asked),
      [0n, 50n],
      'the older chunks, at or below the finalized block, to the lagging upstream (first in order), 49 blocks behind',
    )
    assert.deepEqual(
      firsts(pruned.asked),
      [100n, 150n],
      'the newer chunks to the pruned one: the lagging one lacks the newest, and is too far behind for blocks above the finalized',
    )
    await pool.close()
  })
})
