import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const hash0 = `0x${'11'.repeat(32)}`

/** docs/compatibility.md §1: every row this gateway core touches, exact status and body, and the gateway keeps serving. */
describe('docs/compatibility.md §1 statuses and error bodies', () => {
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

  async function assertStillServing() {
    const { status, json } = await postJson(gateway.endpoint, rpcBody('eth_chainId', [], 99))
    assert.equal(status, 200)
    assert.deepEqual(json, { jsonrpc: '2.0', id: 99, result: '0x7a69' })
  }

  const cases: {
    name: string
    path?: string
    body: unknown
    headers?: Record<string, string>
    status: number
    expected: unknown
  }[] = [
    {
      name: 'no key in the path',
      path: '/v3/',
      body: rpcBody('eth_blockNumber', [], 7),
      status: 401,
      // refused from its headers: the body is not read, so its id is not known
      expected: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'project id required in the url' },
      },
    },
    {
      name: 'no key at all (/v3)',
      path: '/v3',
      body: rpcBody('eth_blockNumber', [], 'a'),
      status: 401,
      expected: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'project id required in the url' },
      },
    },
    {
      name: 'unknown key',
      path: '/v3/0123456789abcdef0123456789abcdef',
      body: rpcBody('eth_blockNumber', [], 8),
      status: 401,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'invalid project id' } },
    },
    {
      name: 'unknown key with a batch (id null)',
      path: '/v3/nope',
      body: [rpcBody('eth_blockNumber')],
      status: 401,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'invalid project id' } },
    },
    {
      name: 'body not JSON',
      body: '{"jsonrpc":"2.0",',
      status: 200,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } },
    },
    {
      name: 'wrong jsonrpc version',
      body: { jsonrpc: '1.0', id: 3, method: 'eth_blockNumber', params: [] },
      status: 200,
      expected: { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'invalid request' } },
    },
    {
      name: 'no method',
      body: { jsonrpc: '2.0', id: 4, params: [] },
      status: 200,
      expected: { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'invalid request' } },
    },
    {
      name: 'bad id type',
      body: { jsonrpc: '2.0', id: { x: 1 }, method: 'eth_blockNumber', params: [] },
      status: 200,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } },
    },
    {
      name: 'a body that is not an object',
      body: '42',
      status: 200,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } },
    },
    {
      name: 'method not offered (node key method)',
      body: rpcBody('eth_sendTransaction', [{}], 5),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32601, message: 'the method eth_sendTransaction does not exist/is not available' },
      },
    },
    {
      name: 'method not offered (dev namespace)',
      body: rpcBody('anvil_setBalance', [hash0.slice(0, 42), '0x1'], 6),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 6,
        error: { code: -32601, message: 'the method anvil_setBalance does not exist/is not available' },
      },
    },
    {
      name: 'eth_subscribe over HTTP',
      body: rpcBody('eth_subscribe', ['newHeads'], 6),
      status: 200,
      expected: { jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'notifications not supported' } },
    },
    {
      name: 'bad params: hex form',
      body: rpcBody('eth_getBlockByNumber', ['0x01', false], 9),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 9,
        error: {
          code: -32602,
          message:
            'invalid argument 0: expected a block number (0x-prefixed hex) or one of latest, earliest, pending, safe, finalized',
        },
      },
    },
    {
      name: 'bad params: type',
      body: rpcBody('eth_getBlockByNumber', ['latest', 'yes'], 10),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 10,
        error: { code: -32602, message: 'invalid argument 1: expected a boolean, got a string' },
      },
    },
    {
      name: 'bad params: length of an address',
      body: rpcBody('eth_getStorageAt', ['0x1234', '0x0', 'latest'], 11),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 11,
        error: { code: -32602, message: 'invalid argument 0: expected a 20-byte 0x-prefixed hex address' },
      },
    },
    {
      name: 'bad params: missing',
      body: rpcBody('eth_getTransactionReceipt', [], 12),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 12,
        error: { code: -32602, message: 'invalid argument 0: missing value for required argument' },
      },
    },
    {
      name: 'bad params: too many',
      body: rpcBody('eth_blockNumber', [1], 13),
      status: 200,
      expected: {
        jsonrpc: '2.0',
        id: 13,
        error: { code: -32602, message: 'invalid argument 0: too many arguments, want at most 0' },
      },
    },
    {
      name: 'empty batch',
      body: [],
      status: 200,
      expected: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } },
    },
    {
      name: 'batch over the limit',
      body: Array.from({ length: 1001 }, (_, index) => rpcBody('eth_chainId', [], index)),
      status: 200,
      expected: [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }],
    },
    {
      name: 'content type not JSON',
      body: rpcBody('eth_blockNumber'),
      headers: { 'content-type': 'text/plain' },
      status: 415,
      expected: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'invalid content type, only application/json is supported' },
      },
    },
    {
      name: 'no content type',
      body: rpcBody('eth_blockNumber'),
      headers: {},
      status: 415,
      expected: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'invalid content type, only application/json is supported' },
      },
    },
  ]

  for (const testCase of cases) {
    it(`${testCase.name}: HTTP ${testCase.status}`, async () => {
      const url = `${gateway.url}${testCase.path ?? `/v3/${gateway.key}`}`
      const response = await postJson(url, testCase.body, testCase.headers)
      assert.equal(response.status, testCase.status)
      assert.match(response.headers.get('content-type') ?? '', /application\/json/)
      assert.deepEqual(response.json, testCase.expected)
      await assertStillServing()
    })
  }

  it('body over 5 MiB: HTTP 413 with the limit in the message', async () => {
    const big = JSON.stringify(rpcBody('eth_call', [{ data: `0x${'00'.repeat(3 * 1024 * 1024)}` }, 'latest']))
    const response = await postJson(gateway.endpoint, big)
    assert.equal(response.status, 413)
    assert.deepEqual(response.json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'request body too large, the limit is 5242880 bytes' },
    })
    await assertStillServing()
  })

  it('a body just under the limit is read (a batch of 1000 calls with long ids)', async () => {
    const batch = Array.from({ length: 1000 }, (_, index) =>
      rpcBody('eth_chainId', [], `${index}:${'x'.repeat(5_100)}`),
    )
    const body = JSON.stringify(batch)
    assert.ok(body.length > 5_150_000 && body.length < 5 * 1024 * 1024, `${body.length} bytes`)
    const response = await postJson(gateway.endpoint, body)
    assert.equal(response.status, 200)
    const answers = response.json as { id: string; result: string }[]
    assert.equal(answers.length, 1000)
    assert.deepEqual(
      answers.map((answer) => answer.id),
      batch.map((call) => call.id),
    )
    assert.ok(answers.every((answer) => answer.result === '0x7a69'))
  })

  it('a revoked key is refused like an unknown one', async () => {
    const {
      key: { key },
    } = await gateway.app.keyAdmin.create({ ...unlimitedKey, name: 'short-lived' })
    await gateway.app.keys.refresh()
    const endpoint = `${gateway.url}/v3/${key}`
    assert.equal((await postJson(endpoint, rpcBody('eth_chainId'))).status, 200)
    assert.equal(await gateway.app.keyStore.revokeKey(key), true)
    await gateway.app.keys.refresh()
    const response = await postJson(endpoint, rpcBody('eth_chainId'))
    assert.equal(response.status, 401)
    assert.deepEqual(response.json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'invalid project id' },
    })
  })

  it('eth_call reverted: passed through unchanged (code 3, reason, raw data)', async () => {
    const call = {
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
    }
    const viaGateway = await postJson(gateway.endpoint, rpcBody('eth_call', [call, 'latest'], 21))
    const direct = await postJson(node.url, rpcBody('eth_call', [call, 'latest'], 21))
    assert.equal(viaGateway.status, 200)
    assert.equal(viaGateway.text, direct.text)
    const { error } = viaGateway.json as { error: { code: number; message: string; data: string } }
    assert.equal(error.code, 3)
    assert.equal(error.message, 'execution reverted: Demo: not allowed')
    assert.match(error.data, /^0x08c379a0/)
  })

  it('a batch over the limit costs what refused input costs (5 credits), not an envelope', async () => {
    const batch = Array.from({ length: 1001 }, (_, index) => rpcBody('eth_chainId', [], index))
    const response = await postJson(gateway.endpoint, batch)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('x-credits-charged'), '5')
    const allRefused = await postJson(gateway.endpoint, [rpcBody('eth_nope', [], 1), 'not a call'])
    assert.equal(allRefused.headers.get('x-credits-charged'), '10')
    const mixed = await postJson(gateway.endpoint, [rpcBody('eth_chainId', [], 1), 'not a call'])
    assert.equal(mixed.headers.get('x-credits-charged'), String(5 + 5 + 80))
  })

  it('the block geth lets callers leave out means latest (eth_call, eth_estimateGas, eth_createAccessList)', async () => {
    const call = {
      from: node.fixtures.accounts[0],
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }),
    }
    for (const method of ['eth_call', 'eth_estimateGas', 'eth_createAccessList']) {
      for (const params of [[call], [call, null]]) {
        const viaGateway = await postJson(gateway.endpoint, rpcBody(method, params, 5))
        const direct = await postJson(node.url, rpcBody(method, [call, 'latest'], 5))
        assert.equal(viaGateway.status, 200, method)
        assert.ok('result' in (viaGateway.json as object), `${method}: ${viaGateway.text}`)
        assert.deepEqual(viaGateway.json, direct.json, method)
      }
    }
    const required = await postJson(gateway.endpoint, rpcBody('eth_getBalance', [call.from], 6))
    assert.deepEqual(required.json, {
      jsonrpc: '2.0',
      id: 6,
      error: { code: -32602, message: 'invalid argument 1: missing value for required argument' },
    })
  })

  it('a batch mixes answers and errors with HTTP 200, and notifications get no element', async () => {
    const response = await postJson(gateway.endpoint, [
      rpcBody('eth_chainId', [], 1),
      { jsonrpc: '2.0', method: 'eth_chainId', params: [] },
      rpcBody('eth_nope', [], 2),
      rpcBody('eth_getBlockByNumber', ['tomorrow', false], 3),
      'not a call',
    ])
    assert.equal(response.status, 200)
    assert.deepEqual(response.json, [
      { jsonrpc: '2.0', id: 1, result: '0x7a69' },
      {
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
      },
      {
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32602,
          message:
            'invalid argument 0: expected a block number (0x-prefixed hex) or one of latest, earliest, pending, safe, finalized',
        },
      },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } },
    ])
  })

  it('a single notification gets an empty answer', async () => {
    const response = await postJson(gateway.endpoint, { jsonrpc: '2.0', method: 'eth_chainId', params: [] })
    assert.equal(response.status, 200)
    assert.equal(response.text, '')
  })

  it('GET on the JSON-RPC path, and unknown paths', async () => {
    const get = await fetch(gateway.endpoint)
    assert.equal(get.status, 405)
    assert.deepEqual(await get.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'method not allowed, send JSON-RPC with POST' },
    })
    const missing = await fetch(`${gateway.url}/v2/whatever`)
    assert.equal(missing.status, 404)
    assert.deepEqual(await missing.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'not found' },
    })
    await assertStillServing()
  })

  it('healthz and readyz', async () => {
    const health = await fetch(`${gateway.url}/healthz`)
    assert.equal(health.status, 200)
    assert.deepEqual(await health.json(), { status: 'ok' })
    const ready = await fetch(`${gateway.url}/readyz`)
    assert.equal(ready.status, 200)
    const body = (await ready.json()) as { status: string; database: string; networks: { ready: boolean }[] }
    assert.equal(body.status, 'ready')
    assert.equal(body.database, 'open')
    assert.equal(body.networks[0]?.ready, true)
  })
})
