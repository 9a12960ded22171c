import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData, hexToBigInt } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const unknownHash = `0x${'ab'.repeat(32)}`

type RpcAnswer = { result?: unknown; error?: { code: number; message: string } }

/** docs/compatibility.md §7: what the gateway guarantees whatever node is behind it. */
describe('docs/compatibility.md §7 duties', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 5 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const viaGateway = async (method: string, params: unknown[]) =>
    (await postJson(gateway.endpoint, rpcBody(method, params))).json as RpcAnswer
  const direct = async (method: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(method, params))).json as RpcAnswer

  it('eth_getBlockReceipts takes a decimal integer (string or number), which the node itself rejects', async () => {
    const receipt = (await direct('eth_getTransactionReceipt', [node.fixtures.eip1559Tx])).result as {
      blockNumber: string
    }
    const decimal = hexToBigInt(receipt.blockNumber as `0x${string}`).toString()
    const expected = await direct('eth_getBlockReceipts', [receipt.blockNumber])
    assert.ok(Array.isArray(expected.result) && expected.result.length === 1)
    assert.deepEqual(await viaGateway('eth_getBlockReceipts', [decimal]), expected)
    assert.deepEqual(await viaGateway('eth_getBlockReceipts', [Number(decimal)]), expected)
    assert.equal((await direct('eth_getBlockReceipts', [decimal])).error?.code, -32602)
  })

  it('eth_getBlockReceipts `pending` answers as `latest` (the node answers null)', async () => {
    const latest = await direct('eth_getBlockReceipts', ['latest'])
    assert.ok(Array.isArray(latest.result))
    assert.deepEqual(await viaGateway('eth_getBlockReceipts', ['pending']), latest)
    assert.equal((await direct('eth_getBlockReceipts', ['pending'])).result, null)
  })

  it('not found is a null result where the node answers an error', async () => {
    const fromNode = await direct('eth_getUncleByBlockHashAndIndex', [unknownHash, '0x0'])
    assert.equal(fromNode.error?.code, -32001)
    await assertNotFoundIsNull(gateway.endpoint)
  })

  it('not found is a null result with the cache off too (sent without the duties layer)', async () => {
    const uncached = await startTestGateway({ upstreams: [node.url], config: { cache: { enabled: false } } })
    try {
      await assertNotFoundIsNull(uncached.endpoint)
    } finally {
      await uncached.close()
    }
  })

  async function assertNotFoundIsNull(endpoint: string): Promise<void> {
    for (const [method, params] of [
      ['eth_getUncleByBlockHashAndIndex', [unknownHash, '0x0']],
      ['eth_getBlockByHash', [unknownHash, false]],
      ['eth_getBlockByNumber', ['0xffffff', true]],
      ['eth_getTransactionByBlockHashAndIndex', [unknownHash, '0x0']],
      ['eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x63']],
      ['eth_getTransactionReceipt', [unknownHash]],
      ['eth_getBlockReceipts', [unknownHash]],
    ] as const) {
      const { json } = await postJson(endpoint, rpcBody(method, [...params]))
      assert.deepEqual(json, { jsonrpc: '2.0', id: 1, result: null }, method)
    }
  }

  /** An eth_call of gasleft() with gas far above the cap (10x the latest block's gas limit), and the cap. */
  async function overCapCall() {
    const block = (await direct('eth_getBlockByNumber', ['latest', false])).result as { gasLimit: string }
    const cap = BigInt(block.gasLimit) * 10n
    const call = {
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'gasLeft' }),
      gas: `0x${(cap * 1000n).toString(16)}`,
    }
    return { cap, call }
  }

  /** The EVM saw the cap: gasleft() is just under it. */
  function assertSawCap(answer: RpcAnswer, cap: bigint): void {
    const capped = BigInt(answer.result as string)
    assert.ok(
      capped < cap && capped > cap - 100_000n,
      `gasleft ${capped} should be just under the cap ${cap}`,
    )
  }

  it('eth_call gas above 10x the latest block gas limit is lowered to the cap (the EVM sees the cap)', async () => {
    const { cap, call } = await overCapCall()
    assertSawCap(await viaGateway('eth_call', [call, 'latest']), cap)
    const uncapped = BigInt((await direct('eth_call', [call, 'latest'])).result as string)
    assert.ok(uncapped > cap, 'the node itself does not cap')

    const withinCap = { ...call, gas: '0x100000' }
    assert.deepEqual(
      await viaGateway('eth_call', [withinCap, 'latest']),
      await direct('eth_call', [withinCap, 'latest']),
    )
  })

  it('eth_call gas above the cap is lowered with the cache off too (sent without the duties layer)', async () => {
    const uncached = await startTestGateway({ upstreams: [node.url], config: { cache: { enabled: false } } })
    try {
      const { cap, call } = await overCapCall()
      const answer = await postJson(uncached.endpoint, rpcBody('eth_call', [call, 'latest']))
      assertSawCap(answer.json as RpcAnswer, cap)
    } finally {
      await uncached.close()
    }
  })

  it('eth_estimateGas with gas above the cap is estimated under the cap', async () => {
    const block = (await direct('eth_getBlockByNumber', ['latest', false])).result as { gasLimit: string }
    const cap = BigInt(block.gasLimit) * 10n
    const call = {
      from: node.fixtures.accounts[1],
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
    }
    const expected = await direct('eth_estimateGas', [{ ...call, gas: `0x${cap.toString(16)}` }])
    assert.deepEqual(
      await viaGateway('eth_estimateGas', [{ ...call, gas: `0x${(cap * 7n).toString(16)}` }]),
      expected,
    )
  })

  it('storage keys of eth_getProof may be short hex: sent on as 32-byte words', async () => {
    const short = await viaGateway('eth_getProof', [node.fixtures.demo, ['0x0'], 'latest'])
    const full = await direct('eth_getProof', [node.fixtures.demo, [`0x${'0'.repeat(64)}`], 'latest'])
    assert.deepEqual(short, full)
    assert.equal((await direct('eth_getProof', [node.fixtures.demo, ['0x0'], 'latest'])).error?.code, -32602)
  })
})

describe('docs/compatibility.md §7 duties against nodes that answer differently', () => {
  it('a -32001 or "not found" error becomes null; other errors pass through; bad input never reaches the node', async () => {
    const fake = await startFakeUpstream({ kind: 'json', respond: () => null })
    const gateway = await startTestGateway({ upstreams: [fake.url] })
    try {
      fake.requests.length = 0
      const invalid = [
        rpcBody('eth_getBlockByNumber', ['latest-ish', false]),
        rpcBody('eth_getBlockByNumber', ['0x', false]),
        rpcBody('eth_getBlockByHash', ['0x12', false]),
        rpcBody('eth_getStorageAt', [`0x${'1'.repeat(40)}`, `0x${'1'.repeat(65)}`, 'latest']),
        rpcBody('eth_getProof', [`0x${'1'.repeat(40)}`, 'not-an-array', 'latest']),
        rpcBody('eth_call', [{ to: '0x12' }, 'latest']),
      ]
      for (const body of invalid) {
        const { json } = await postJson(gateway.endpoint, body)
        assert.equal((json as RpcAnswer).error?.code, -32602, JSON.stringify(body))
      }
      // the gateway's own head polls (eth_getBlockByNumber latest/finalized) run in the background
      const own = (request: { method: string; params: unknown[] }) =>
        request.method === 'eth_getBlockByNumber' &&
        ['latest', 'finalized'].includes(request.params[0] as string)
      assert.deepEqual(
        fake.requests.filter((request) => !own(request)),
        [],
        'no invalid call reached the node',
      )

      const original = fake.behave
      original({
        kind: 'status',
        status: 200,
        body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}',
      })
      const notFound = await postJson(gateway.endpoint, rpcBody('eth_getBlockByNumber', ['0x99', false]))
      assert.deepEqual(notFound.json, { jsonrpc: '2.0', id: 1, result: null })
      const elsewhere = await postJson(
        gateway.endpoint,
        rpcBody('eth_getBalance', [`0x${'1'.repeat(40)}`, '0x99']),
      )
      assert.deepEqual(elsewhere.json, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32000, message: 'header not found' },
      })
    } finally {
      await gateway.close()
      await fake.close()
    }
  })
})
