import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { UpstreamPool } from '../src/upstreams/createUpstreamPool.ts'
import type { PoolMember } from '../src/upstreams/PoolMember.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

type NodeError = { code: number; message: string; data?: unknown }
type Row = { client: string; kind: 'capacity' | 'missingData' | 'refused'; error: NodeError }

/** Errors as the clients and providers answer them (docs/compatibility.md §7; the table in src/upstreams/nodeErrors.ts). */
const rows: Row[] = [
  {
    client: 'Infura',
    kind: 'capacity',
    error: {
      code: -32005,
      message: 'daily request count exceeded, request rate limited',
      data: {
        rate: { allowed_rps: 1, backoff_seconds: 30, current_rps: 1.3 },
        see: 'https://infura.io/dashboard',
      },
    },
  },
  {
    client: 'Infura',
    kind: 'capacity',
    error: { code: -32005, message: 'project ID request rate exceeded' },
  },
  {
    client: 'Alchemy',
    kind: 'capacity',
    error: {
      code: 429,
      message:
        'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput',
    },
  },
  {
    client: 'QuickNode',
    kind: 'capacity',
    error: {
      code: -32007,
      message:
        '15/second request limit reached - reduce calls per second or upgrade your account at quicknode.com',
    },
  },
  { client: 'QuickNode', kind: 'capacity', error: { code: -32012, message: 'credits limited to 6000/sec' } },
  {
    client: 'a hosted provider',
    kind: 'capacity',
    error: { code: -32000, message: 'Monthly capacity limit exceeded.' },
  },
  { client: 'geth', kind: 'capacity', error: { code: -32002, message: 'request timed out' } },
  { client: 'geth', kind: 'missingData', error: { code: -32000, message: 'header not found' } },
  {
    client: 'geth',
    kind: 'missingData',
    error: { code: -32000, message: 'missing trie node 1f2e3d4c5b6a (path )' },
  },
  {
    client: 'geth',
    kind: 'missingData',
    error: { code: -32000, message: 'required historical state unavailable (reexec=128)' },
  },
  {
    client: 'geth',
    kind: 'missingData',
    error: { code: -32000, message: `historical state 0x${'ab'.repeat(32)} is not available` },
  },
  { client: 'reth', kind: 'missingData', error: { code: -32000, message: 'state at block #1234 is pruned' } },
  {
    client: 'erigon',
    kind: 'missingData',
    error: { code: -32000, message: 'old data not available due to pruning' },
  },
  {
    client: 'nethermind',
    kind: 'missingData',
    error: { code: -32002, message: `No state available for block 0x${'3f'.repeat(32)}` },
  },
  { client: 'besu', kind: 'missingData', error: { code: -32000, message: 'World state unavailable' } },
  { client: 'besu', kind: 'missingData', error: { code: -32000, message: 'Block not found' } },
  { client: 'reth', kind: 'missingData', error: { code: 4444, message: 'pruned history unavailable' } },
  { client: 'reth', kind: 'missingData', error: { code: -32001, message: 'block not found: number 0x2a' } },
  { client: 'erigon', kind: 'missingData', error: { code: -32000, message: 'block not found: 42' } },
  {
    client: 'nethermind',
    kind: 'missingData',
    error: { code: 4444, message: 'Pruned history unavailable for block 42' },
  },
  { client: 'nethermind', kind: 'missingData', error: { code: -39001, message: 'Unknown block error' } },
  {
    client: 'Infura',
    kind: 'refused',
    error: {
      code: -32005,
      message: 'query returned more than 10000 results. Try with this block range [0x1, 0x2].',
    },
  },
  {
    client: 'Alchemy',
    kind: 'refused',
    error: {
      code: -32602,
      message:
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x0, 0x1]',
    },
  },
  {
    client: 'QuickNode',
    kind: 'refused',
    error: { code: -32602, message: 'eth_getLogs is limited to a 10,000 range' },
  },
  { client: 'geth', kind: 'refused', error: { code: -32003, message: 'response too large' } },
  {
    client: 'a node without the method',
    kind: 'refused',
    error: { code: -32601, message: 'the method eth_getLogs does not exist/is not available' },
  },
]

/** Execution errors and errors the node rightly answered: the client's answer, never retried. */
const answers: { what: string; error: NodeError }[] = [
  {
    what: 'a revert (code 3), even one whose reason reads like a rate limit',
    error: {
      code: 3,
      message: 'execution reverted: rate limit exceeded',
      data: '0x08c379a00000000000000000000000000000000000000000000000000000000000000020',
    },
  },
  {
    what: "nethermind's VM execution error",
    error: { code: -32015, message: 'VM execution error.', data: 'Reverted 0x08c379a0' },
  },
  {
    what: 'invalid params the node rightly refused',
    error: {
      code: -32602,
      message: 'invalid argument 0: json: cannot unmarshal hex string without 0x prefix',
    },
  },
  {
    what: 'insufficient funds',
    error: { code: -32000, message: 'insufficient funds for gas * price + value' },
  },
  {
    what: 'an error no table row names',
    error: { code: -32000, message: 'something the table does not know' },
  },
]

const settings = {
  timeoutMs: 5_000,
  attemptTimeoutMs: 2_000,
  // head polls only at start: the tests set the members' health themselves
  headPollMs: 600_000,
  breaker: { failures: 3, cooldownMs: 60_000, maxCooldownMs: 60_000 },
}

describe('node errors are normalised at the edge, once (docs/compatibility.md §7)', () => {
  let node: TestNode
  let first: FakeUpstream
  let second: FakeUpstream
  let gateway: TestGateway
  let pool: UpstreamPool
  let members: readonly PoolMember[]

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    first = await startFakeUpstream({ kind: 'proxy', target: node.url })
    second = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      upstreams: [first.url, second.url],
      // every call reaches an upstream
      config: { upstreams: settings, cache: { enabled: false } },
    })
    pool = gateway.app.networks.all[0]?.pool as UpstreamPool
    members = pool.members
  })
  after(async () => {
    await gateway?.close()
    await first?.close()
    await second?.close()
    await node?.stop()
  })
  beforeEach(() => {
    first.behave({ kind: 'proxy', target: node.url })
    second.behave({ kind: 'proxy', target: node.url })
    // both members well again, the first one first
    // (a failed health check, then answered ones: in use, its breaker's count forgotten, not degraded)
    for (const member of members) {
      member.noteProbeFailure('test: reset')
      do member.noteProbedHead(member.head ?? 0n)
      while (member.isDegraded())
    }
  })

  /** The call a row is tried with: eth_getLogs for log limits, eth_getBalance for the others. */
  const callFor = (row: Row, id: number) =>
    row.kind === 'refused'
      ? rpcBody('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x2', address: node.fixtures.demo }], id)
      : rpcBody('eth_getBalance', [node.fixtures.accounts[1], 'latest'], id)

  const asked = (fake: FakeUpstream, method: string) =>
    fake.requests.filter((request) => request.method === method).length

  for (const [index, row] of rows.entries()) {
    it(`${row.client} ${row.error.code} "${row.error.message.slice(0, 48)}": another upstream answers (${row.kind})`, async () => {
      const call = callFor(row, 100 + index)
      first.behave({
        kind: 'forMethods',
        methods: [call.method],
        behaviour: { kind: 'rpcError', error: row.error },
        otherwise: node.url,
      })
      const [member] = members as [PoolMember]
      const before = {
        failures: member.failures,
        consecutive: member.breaker.consecutiveFailures,
        rate: member.errorRate,
      }
      const askedFirst = asked(first, call.method)
      const askedSecond = asked(second, call.method)

      const response = await postJson(gateway.endpoint, call)
      const direct = await postJson(node.url, call)
      assert.equal(response.status, 200)
      assert.deepEqual(response.json, direct.json)
      assert.equal(asked(first, call.method), askedFirst + 1, 'the first upstream was asked')
      assert.equal(asked(second, call.method), askedSecond + 1, 'the second one answered')

      // what it says of the first upstream's health
      if (row.kind === 'capacity') {
        assert.equal(member.failures, before.failures + 1)
        assert.equal(member.breaker.consecutiveFailures, before.consecutive + 1, 'counts toward its breaker')
      } else if (row.kind === 'missingData') {
        assert.equal(member.failures, before.failures + 1)
        assert.ok(member.errorRate > before.rate, 'its error rate rises')
        assert.equal(member.breaker.consecutiveFailures, before.consecutive, 'its breaker is left alone')
      } else {
        assert.deepEqual(
          [member.failures, member.errorRate],
          [before.failures, before.rate],
          'not held against it',
        )
      }
    })
  }

  for (const { what, error } of answers) {
    it(`${what}: passes through as the node wrote it, never retried`, async () => {
      const call = rpcBody(
        'eth_estimateGas',
        [{ from: node.fixtures.accounts[1], to: node.fixtures.demo }],
        7,
      )
      first.behave({
        kind: 'forMethods',
        methods: ['eth_estimateGas'],
        behaviour: { kind: 'rpcError', error },
        otherwise: node.url,
      })
      const askedSecond = asked(second, 'eth_estimateGas')
      const response = await postJson(gateway.endpoint, call)
      assert.equal(response.status, 200)
      assert.deepEqual(response.json, { jsonrpc: '2.0', id: 7, error })
      assert.equal(asked(second, 'eth_estimateGas'), askedSecond, 'the second upstream was not asked')
    })
  }

  it("a real node's revert is an answer: sent once, never to the second upstream", async () => {
    const call = rpcBody('eth_call', [
      {
        from: node.fixtures.accounts[1],
        to: node.fixtures.demo,
        data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
      },
      'latest',
    ])
    const askedFirst = asked(first, 'eth_call')
    const askedSecond = asked(second, 'eth_call')
    const response = await postJson(gateway.endpoint, call)
    assert.deepEqual(response.json, (await postJson(node.url, call)).json)
    assert.equal((response.json as { error: { code: number } }).error.code, 3)
    assert.deepEqual([asked(first, 'eth_call'), asked(second, 'eth_call')], [askedFirst + 1, askedSecond])
  })

  describe('when every upstream answers such an error', () => {
    const call = () => rpcBody('eth_getBalance', [node.fixtures.accounts[1], '0x1'], 'all')
    const answering = (error: NodeError) => ({
      kind: 'forMethods' as const,
      methods: ['eth_getBalance'],
      behaviour: { kind: 'rpcError' as const, error },
      otherwise: node.url,
    })

    it("missing data everywhere: the client gets the last node's error, which says what is missing", async () => {
      first.behave(answering({ code: -32000, message: 'missing trie node 01 (path )' }))
      second.behave(answering({ code: -32000, message: 'missing trie node 02 (path )' }))
      const response = await postJson(gateway.endpoint, call())
      assert.equal(response.status, 200)
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 'all',
        error: { code: -32000, message: 'missing trie node 02 (path )' },
      })
    })

    it('out of capacity everywhere: a 503, as when every upstream answers HTTP 429', async () => {
      first.behave(answering({ code: -32005, message: 'daily request count exceeded, request rate limited' }))
      second.behave(
        answering({ code: -32007, message: '10/second request limit reached - reduce calls per second' }),
      )
      const response = await postJson(gateway.endpoint, call())
      assert.equal(response.status, 503)
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 'all',
        error: { code: -32603, message: 'no upstream available, try again later' },
      })
      assert.ok(!response.text.includes('daily request count'), "the upstream's quota is not the client's")
    })

    it("missing data on one and no capacity on the other: the node's word on what is missing", async () => {
      first.behave(answering({ code: -32000, message: 'header not found' }))
      second.behave(answering({ code: 429, message: 'Too Many Requests' }))
      const response = await postJson(gateway.endpoint, call())
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 'all',
        error: { code: -32000, message: 'header not found' },
      })
    })
  })
})
