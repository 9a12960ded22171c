import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { until } from '../../test/helpers/until.ts'
import { createHistoryProber } from './createHistoryProber.ts'
import type { Upstream } from './createUpstream.ts'
import { createUpstreamPool } from './createUpstreamPool.ts'
import type { PoolMember } from './PoolMember.ts'

/**
 * A node that keeps blocks from `earliestBlock` and state from `earliestState` up to `head`, and
 * answers as anvil does (state it pruned: -32602 `BlockOutOfRangeError`; a block it lacks: null),
 * or answers HTTP 500 to everything (`down`). It counts the requests of each method.
 */
type FakeNode = Upstream & {
  head: bigint
  earliestState: bigint
  earliestBlock: bigint
  /** Below earliestBlock, from this block on: headers without their transactions. */
  headersFrom?: bigint
  down: boolean
  calls: Record<string, number>
}

function fakeNode(head: bigint, earliestState: bigint, earliestBlock = 0n): FakeNode {
  const node: FakeNode = {
    label: 'node',
    head,
    earliestState,
    earliestBlock,
    down: false,
    calls: {},
    post: () => Promise.reject(new Error('not used')),
    dispatch(body, _options, done) {
      const { method, params } = JSON.parse(body.toString()) as { method: string; params: string[] }
      node.calls[method] = (node.calls[method] ?? 0) + 1
      const answer = (payload: object) =>
        setImmediate(() =>
          done({
            response: {
              status: 200,
              body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...payload })),
            },
          }),
        )
      if (node.down) {
        setImmediate(() => done({ response: { status: 500, body: Buffer.from('busy') } }))
        return
      }
      if (method === 'eth_blockNumber') return answer({ result: `0x${node.head.toString(16)}` })
      const block = BigInt(method === 'eth_getBalance' ? (params[1] as string) : (params[0] as string))
      if (method === 'eth_getBalance') {
        if (block >= node.earliestState && block <= node.head) return answer({ result: '0x0' })
        const message = `BlockOutOfRangeError: block height is ${node.head} but requested was ${block}`
        return answer({ error: { code: -32602, message } })
      }
      // every node keeps the genesis block
      const has = (block === 0n || block >= node.earliestBlock) && block <= node.head
      if (!has && node.headersFrom !== undefined && block >= node.headersFrom && block <= node.head) {
        // its header kept, its transactions dropped (anvil's --transaction-block-keeper); the genesis has none
        const transactionsRoot = block === 0n ? emptyTrieRoot : `0x${'12'.repeat(32)}`
        return answer({ result: { number: `0x${block.toString(16)}`, transactions: [], transactionsRoot } })
      }
      return answer({ result: has ? { number: `0x${block.toString(16)}`, transactions: ['0x1'] } : null })
    },
    async close() {},
  }
  return node
}

const emptyTrieRoot = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'

const poolOptions = {
  timeoutMs: 1000,
  attemptTimeoutMs: 1000,
  maxAttempts: 2,
  maxLagBlocks: 2,
  breakerFailures: 3,
  breakerCooldownMs: 1000,
  breakerMaxCooldownMs: 1000,
}

function setup(nodes: FakeNode[], maxCalls?: number) {
  const pool = createUpstreamPool(nodes, poolOptions)
  const prober = createHistoryProber(pool, {
    intervalMs: 0,
    timeoutMs: 1000,
    ...(maxCalls ? { maxCalls } : {}),
  })
  const member = (index: number) => pool.members[index] as PoolMember
  return { pool, prober, member }
}

const requests = (node: FakeNode) => Object.values(node.calls).reduce((sum, count) => sum + count, 0)

describe('createHistoryProber', () => {
  it("finds each member's earliest state and block: an archive node in one request each", async () => {
    const pruned = fakeNode(100n, 70n)
    const archive = fakeNode(100n, 0n)
    const expired = fakeNode(100n, 40n, 25n)
    const { prober, member } = setup([pruned, archive, expired])
    await prober.probe()
    assert.deepEqual(
      [0, 1, 2].map((index) => [member(index).earliestState, member(index).earliestBlock]),
      [
        [70n, 0n],
        [0n, 0n],
        [40n, 25n],
      ],
    )
    // its head asked once (unknown to the pool), then block 0 of each kind
    assert.deepEqual(archive.calls, { eth_blockNumber: 1, eth_getBalance: 1, eth_getBlockByNumber: 1 })
  })

  it('a block whose header it keeps without its transactions is one it lacks; the genesis is no guide', async () => {
    const keeper = fakeNode(100n, 90n, 64n)
    keeper.headersFrom = 0n
    const expired = fakeNode(100n, 90n, 37n)
    const { prober, member } = setup([keeper, expired])
    await prober.probe()
    assert.deepEqual([member(0).earliestBlock, member(1).earliestBlock], [64n, 37n])
  })

  it('probes again from what it found: two requests while nothing moved, and follows a window that moved', async () => {
    const pruned = fakeNode(100n, 70n)
    const { prober, member } = setup([pruned])
    await prober.probe()
    member(0).noteProbedHead(100n)
    pruned.calls = {}
    await prober.probe()
    assert.equal(member(0).earliestState, 70n)
    assert.equal(pruned.calls.eth_getBalance, 2)
    pruned.head = 110n
    pruned.earliestState = 80n
    member(0).noteProbedHead(110n)
    await prober.probe()
    assert.equal(member(0).earliestState, 80n)
  })

  it('is bounded in requests: past maxCalls, the lowest block found to have state (never one it lacks)', async () => {
    const pruned = fakeNode(1n << 40n, 123_456_789n)
    const { prober, member } = setup([pruned], 10)
    await prober.probe()
    const found = member(0).earliestState as bigint
    assert.ok(found >= 123_456_789n && found <= 1n << 40n, String(found))
    assert.ok((pruned.calls.eth_getBalance as number) <= 10)
  })

  it('a refusal for want of state has that member probed at once, even with no probes on a timer', async () => {
    const pruned = fakeNode(100n, 70n)
    const archive = fakeNode(100n, 0n)
    const { pool, member } = setup([pruned, archive])
    member(0).noteProbedHead(100n)
    member(1).noteProbedHead(100n)
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","0x5"]}'
    const answer = await pool.send(body, { block: 5n, needsState: true, retry: true })
    assert.equal(answer.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x0"}')
    assert.equal(archive.calls.eth_getBalance, 1)
    await until(() => member(0).earliestState === 70n, 'the probe after the refusal')
    assert.equal(member(1).earliestState, undefined)
  })

  it('start: a probe, then one every intervalMs; for a pool of one upstream (nothing to route), none', async () => {
    for (const count of [1, 2]) {
      const nodes = Array.from({ length: count }, () => fakeNode(100n, 70n))
      const pool = createUpstreamPool(nodes, poolOptions)
      const timers = createFakeTimers()
      const prober = createHistoryProber(pool, { intervalMs: 60_000, timeoutMs: 1000, timers })
      await prober.start()
      if (count === 1) {
        await timers.advance(120_000)
        assert.deepEqual((nodes[0] as FakeNode).calls, {})
      } else {
        assert.ok(pool.members.every((member) => member.earliestState === 70n))
        const first = requests(nodes[0] as FakeNode)
        await timers.advance(60_000)
        await until(() => requests(nodes[0] as FakeNode) > first, 'the next probe')
      }
      prober.close()
    }
  })

  it('a member that cannot be told keeps what was known', async () => {
    const node = fakeNode(100n, 70n)
    const { prober, member } = setup([node])
    await prober.probe()
    node.down = true
    node.earliestState = 0n
    const before = requests(node)
    await prober.probe()
    assert.ok(requests(node) > before)
    assert.deepEqual([member(0).earliestState, member(0).earliestBlock], [70n, 0n])
  })
})
