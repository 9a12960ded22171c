import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const hex = (value: bigint | number) => `0x${value.toString(16)}`

describe('eth_getLogs is bounded (docs/compatibility.md §7)', () => {
  let node: TestNode
  /** In front of the node: counts what the gateway asked. */
  let upstream: FakeUpstream
  let gateway: TestGateway
  /** The first of four blocks holding 2, 3, 2 and 3 Incremented logs of the Demo contract. */
  let first: bigint

  const nodeCall = async (method: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(method, params))).json as { result: unknown }
  const logCalls = () => upstream.requests.filter((request) => request.method === 'eth_getLogs').length
  const getLogs = (network: string, filter: object, id: number | string = 1) =>
    postJson(`${gateway.url}/${network}/v3/${gateway.key}`, rpcBody('eth_getLogs', [filter], id))

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    const sender = node.fixtures.accounts[3] as string
    first = BigInt((await nodeCall('eth_blockNumber', [])).result as string) + 1n
    await nodeCall('evm_setAutomine', [false])
    try {
      let nonce = Number((await nodeCall('eth_getTransactionCount', [sender, 'latest'])).result)
      for (const logs of [2, 3, 2, 3]) {
        for (let index = 0; index < logs; index++) {
          await nodeCall('eth_sendTransaction', [
            {
              from: sender,
              to: node.fixtures.demo,
              data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
              gas: '0x30000',
              nonce: hex(nonce++),
            },
          ])
        }
        await nodeCall('evm_mine', [])
      }
    } finally {
      await nodeCall('evm_setAutomine', [true])
    }
    upstream = await startFakeUpstream({ kind: 'proxy', target: node.url })
    const on = (name: string, limits: object) => ({
      name,
      chainId: 31337,
      upstreams: [{ url: upstream.url }],
      ...limits,
    })
    gateway = await startTestGateway({
      config: {
        networks: [
          on('devnet', {}),
          on('narrow', { maxLogsBlockRange: 5 }),
          on('tight', { maxLogsResults: 5 }),
          on('tiny', { maxLogsResults: 2 }),
        ],
        // every call reaches the node
        cache: { enabled: false },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await upstream?.close()
    await node?.stop()
  })

  it('the four blocks hold the logs the tests count on', async () => {
    const counts = []
    for (let block = first; block < first + 4n; block++) {
      const logs = await nodeCall('eth_getLogs', [
        { fromBlock: hex(block), toBlock: hex(block), address: node.fixtures.demo },
      ])
      counts.push((logs.result as unknown[]).length)
    }
    assert.deepEqual(counts, [2, 3, 2, 3])
  })

  describe('block range', () => {
    it('10,000 blocks by default are asked; 10,001 are refused with -32602 naming the limit, before any node is asked, for 5 credits', async () => {
      const allowed = await getLogs('devnet', {
        fromBlock: '0x1',
        toBlock: hex(10_000),
        address: node.fixtures.demo,
      })
      assert.equal(allowed.status, 200)
      assert.ok(Array.isArray((allowed.json as { result: unknown }).result))

      const before = logCalls()
      const refused = await getLogs('devnet', { fromBlock: '0x1', toBlock: hex(10_001) }, 'wide')
      assert.equal(refused.status, 200)
      assert.deepEqual(refused.json, {
        jsonrpc: '2.0',
        id: 'wide',
        error: {
          code: -32602,
          message: 'invalid argument 0: block range too large, the limit is 10000 blocks',
        },
      })
      assert.equal(logCalls(), before, 'no node was asked')
      assert.equal(refused.headers.get('x-credits-charged'), '5')
    })

    it('tags are read against the network head: latest, earliest, and a missing fromBlock or toBlock', async () => {
      const head = BigInt((await nodeCall('eth_blockNumber', [])).result as string)
      const within = { fromBlock: hex(head - 4n), toBlock: 'latest' }
      const direct = await nodeCall('eth_getLogs', [within])
      assert.deepEqual((await getLogs('narrow', within)).json, { jsonrpc: '2.0', id: 1, ...direct })

      const message = 'invalid argument 0: block range too large, the limit is 5 blocks'
      for (const filter of [
        { fromBlock: hex(head - 5n), toBlock: 'latest' },
        { fromBlock: hex(head - 5n) },
        { fromBlock: 'earliest', toBlock: hex(5) },
        { fromBlock: hex(head - 5n), toBlock: 'pending' },
      ]) {
        const refused = await getLogs('narrow', filter)
        assert.deepEqual(
          refused.json,
          { jsonrpc: '2.0', id: 1, error: { code: -32602, message } },
          JSON.stringify(filter),
        )
      }
    })

    it('a blockHash query has no range to check', async () => {
      const block = (await nodeCall('eth_getBlockByNumber', [hex(first + 1n), false])).result as {
        hash: string
      }
      const filter = { blockHash: block.hash, address: node.fixtures.demo }
      const direct = await nodeCall('eth_getLogs', [filter])
      assert.deepEqual((await getLogs('narrow', filter)).json, { jsonrpc: '2.0', id: 1, ...direct })
    })
  })

  describe('results', () => {
    it('up to the limit the answer passes through untouched', async () => {
      const filter = { fromBlock: hex(first), toBlock: hex(first + 1n), address: node.fixtures.demo }
      const direct = await postJson(node.url, rpcBody('eth_getLogs', [filter], 9))
      const answer = await getLogs('tight', filter, 9)
      assert.equal((answer.json as { result: unknown[] }).result.length, 5)
      assert.equal(answer.text, direct.text, 'byte for byte')
    })

    it('over the limit: -32005 as the hosted service words it, with a range that holds no more', async () => {
      const filter = { fromBlock: hex(first), toBlock: hex(first + 3n), address: node.fixtures.demo }
      const refused = await getLogs('tight', filter, 'many')
      assert.equal(refused.status, 200)
      // the sixth log is in the third block: the first two hold five
      assert.deepEqual(refused.json, {
        jsonrpc: '2.0',
        id: 'many',
        error: {
          code: -32005,
          message: `query returned more than 5 results. Try with this block range [${hex(first)}, ${hex(first + 1n)}].`,
        },
      })
      assert.equal(refused.headers.get('x-credits-charged'), '255', 'the node did the work')

      const suggested = await getLogs('tight', { ...filter, toBlock: hex(first + 1n) })
      assert.equal((suggested.json as { result: unknown[] }).result.length, 5)
    })

    it('a trace_filter answer is not counted for logs, whatever fields it holds', async () => {
      // scripted: three traces, each with a logIndex field, past what `tiny` allows an eth_getLogs
      const traces = [0, 1, 2].map((index) => ({
        action: { from: node.fixtures.demo, to: node.fixtures.demo, input: `0x${'00'.repeat(64)}` },
        blockNumber: Number(first),
        logIndex: hex(index),
        subtraces: 0,
        traceAddress: [],
        type: 'call',
      }))
      upstream.behave({
        kind: 'forMethods',
        methods: ['trace_filter'],
        behaviour: { kind: 'json', respond: () => traces },
        otherwise: node.url,
      })
      try {
        const filter = { fromBlock: hex(first), toBlock: hex(first + 3n) }
        const answer = await postJson(
          `${gateway.url}/tiny/v3/${gateway.key}`,
          rpcBody('trace_filter', [filter], 'traces'),
        )
        assert.ok(answer.text.length > 2 * 128, 'long enough to be counted')
        assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 'traces', result: traces })
      } finally {
        upstream.behave({ kind: 'proxy', target: node.url })
      }
    })

    it('a blockHash query over the limit is refused without a range to suggest', async () => {
      const block = (await nodeCall('eth_getBlockByNumber', [hex(first + 1n), false])).result as {
        hash: string
      }
      const refused = await getLogs('tiny', { blockHash: block.hash, address: node.fixtures.demo })
      assert.deepEqual(refused.json, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32005, message: 'query returned more than 2 results' },
      })
    })
  })
})
