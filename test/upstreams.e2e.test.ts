import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const unavailable = { code: -32603, message: 'no upstream available, try again later' }
const timedOut = { code: -32603, message: 'upstream request timed out' }

describe('upstream failures', () => {
  let fake: FakeUpstream
  let gateway: TestGateway
  let deadUrl: string

  // the calls are web3_clientVersion: never kept, always asked of the upstream (eth_blockNumber is the
  // head model's own, asking no node)
  before(async () => {
    // healthy at start (its breaker closed), then made to fail by each test
    fake = await startFakeUpstream({
      kind: 'json',
      respond: () => ({ number: '0x1', gasLimit: '0x1c9c380', hash: `0x${'00'.repeat(32)}` }),
    })
    deadUrl = `http://user:s3cret@127.0.0.1:${await freePort()}/v3/vendorkey123`
    gateway = await startTestGateway({
      upstreams: [fake.url],
      config: { upstreams: { timeoutMs: 300, headPollMs: 60_000 } },
    })
    // the start-up reads are done: the genesis block, and the one behind the first head (the chain's
    // backfill, which gives up on this fake's block without a parent)
    await until(
      () => fake.requests.filter((request) => (request.params as unknown[])?.[0] === '0x0').length >= 2,
      'the start-up reads of block 0',
    )
  })
  after(async () => {
    await gateway?.close()
    await fake?.close()
  })

  it('an upstream that does not answer in time: 504, given up on by the timeout', async () => {
    fake.behave({ kind: 'hang' })
    const member = gateway.app.networks.all[0]?.pool.members[0]
    assert.ok(member)
    const [asked, failures] = [fake.requests.length, member.failures]
    const response = await postJson(gateway.endpoint, rpcBody('web3_clientVersion', [], 5))
    assert.equal(response.status, 504)
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: 5, error: timedOut })
    // the call reached the upstream once (no retry once its time was up) and failed there
    assert.deepEqual(
      fake.requests
        .slice(asked)
        .map((request) => request.method)
        .filter((method) => method === 'web3_clientVersion'),
      ['web3_clientVersion'],
    )
    // a failure of the upstream's once its liveness check (attemptTimeoutMs: 5 s) goes unanswered too
    await until(() => member.failures === failures + 1, 'the timeout held against the upstream')
    // ended by the attempt's timer, as the gateway set it (not a time this test measures): the call's
    // whole budget, upstreams.timeoutMs (300 ms), less the sub-millisecond between the call's start and
    // its attempt (no I/O); not attemptTimeoutMs's 5 s, nor a budget cut short
    const timer = /^no answer within (\d+(?:\.\d+)?) ms$/.exec(member.lastError ?? '')
    assert.ok(timer, `the upstream's last error: ${member.lastError}`)
    const timerMs = Number(timer[1])
    assert.ok(timerMs >= 280 && timerMs <= 300, `the attempt's timer: ${timerMs} ms`)
  })

  for (const behaviour of [
    { kind: 'status', status: 500 },
    { kind: 'status', status: 429 },
    { kind: 'status', status: 502, body: '<html>bad gateway</html>' },
    { kind: 'garbage' },
    { kind: 'drop' },
  ] as const) {
    it(`an upstream that answers ${behaviour.kind}${'status' in behaviour ? ` ${behaviour.status}` : ''}: 503`, async () => {
      fake.behave(behaviour)
      const response = await postJson(gateway.endpoint, rpcBody('web3_clientVersion', [], 6))
      assert.equal(response.status, 503)
      assert.deepEqual(response.json, { jsonrpc: '2.0', id: 6, error: unavailable })
    })
  }

  it('in a batch, upstream failures are per element with HTTP 200', async () => {
    fake.behave({ kind: 'status', status: 500 })
    const response = await postJson(gateway.endpoint, [
      rpcBody('web3_clientVersion', [], 1),
      rpcBody('eth_nope', [], 2),
    ])
    assert.equal(response.status, 200)
    assert.deepEqual(response.json, [
      { jsonrpc: '2.0', id: 1, error: unavailable },
      {
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
      },
    ])
  })

  it('no error, readyz or log names an upstream URL or its credentials', async () => {
    const other = await startTestGateway({
      upstreams: [deadUrl],
      config: { upstreams: { timeoutMs: 300, headPollMs: 60_000 } },
    })
    try {
      const response = await postJson(other.endpoint, rpcBody('eth_blockNumber', [], 7))
      assert.equal(response.status, 503)
      assert.deepEqual(response.json, { jsonrpc: '2.0', id: 7, error: unavailable })
      const ready = await fetch(`${other.url}/readyz`)
      assert.equal(ready.status, 503)
      const text = await ready.text()
      for (const secret of ['s3cret', 'vendorkey123', 'user']) {
        assert.ok(!response.text.includes(secret) && !text.includes(secret), `leaked ${secret}`)
      }
      assert.match(text, /"name":"http:\/\/…@127\.0\.0\.1:\d+\/…"/)
    } finally {
      await other.close()
    }
  })
})

describe('several upstreams', () => {
  let node: TestNode
  let fake: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    fake = await startFakeUpstream({ kind: 'status', status: 503 })
    gateway = await startTestGateway({
      upstreams: [fake.url, node.url],
      config: { upstreams: { timeoutMs: 2_000 } },
    })
  })
  after(async () => {
    await gateway?.close()
    await fake?.close()
    await node?.stop()
  })

  it('a failing upstream is passed over for the next one', async () => {
    const response = await postJson(gateway.endpoint, rpcBody('eth_chainId'))
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
  })

  it('a failing upstream is marked unhealthy and tried last, and healthy again once it answers', async () => {
    const members = gateway.app.networks.all[0]?.pool.members ?? []
    fake.behave({ kind: 'status', status: 503 })
    await gateway.app.networks.all[0]?.heads.poll()
    assert.deepEqual(
      members.map((member) => member.breaker.state === 'closed'),
      [false, true],
    )
    fake.behave({
      kind: 'json',
      respond: () => ({ number: '0x1', gasLimit: '0x1c9c380', hash: `0x${'00'.repeat(32)}` }),
    })
    await gateway.app.networks.all[0]?.heads.poll()
    assert.deepEqual(
      members.map((member) => member.breaker.state === 'closed'),
      [true, true],
    )
  })
})

describe('network selection', () => {
  let nodeA: TestNode
  let fakeB: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    nodeA = await startTestNode({ loadBlocks: 2 })
    fakeB = await startFakeUpstream({
      kind: 'json',
      respond: ({ method }) => (method === 'eth_chainId' ? '0x1' : null),
    })
    gateway = await startTestGateway({
      config: {
        networks: [
          { name: 'devnet', chainId: 31337, upstreams: [{ url: nodeA.url }] },
          { name: 'mainnet', chainId: 1, upstreams: [{ url: fakeB.url }], hosts: ['rpc.example.org'] },
        ],
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await fakeB?.close()
    await nodeA?.stop()
  })

  /** fetch() does not let a caller set Host; node:http does. */
  const chainIdVia = (path: string, host?: string) =>
    new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      const url = new URL(gateway.url)
      const request = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          headers: { 'content-type': 'application/json', host: host ?? url.host },
        },
        async (response) => {
          let text = ''
          for await (const chunk of response) text += chunk
          resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) })
        },
      )
      request.on('error', reject)
      request.end(JSON.stringify(rpcBody('eth_chainId')))
    })

  it('by path prefix', async () => {
    assert.deepEqual((await chainIdVia(`/mainnet/v3/${gateway.key}`)).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x1',
    })
    assert.deepEqual((await chainIdVia(`/devnet/v3/${gateway.key}`)).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x7a69',
    })
  })

  it('by the first label of the Host header, or a configured host', async () => {
    assert.deepEqual((await chainIdVia(`/v3/${gateway.key}`, 'mainnet.gateway.local:8545')).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x1',
    })
    assert.deepEqual((await chainIdVia(`/v3/${gateway.key}`, 'rpc.example.org')).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x1',
    })
    assert.deepEqual((await chainIdVia(`/v3/${gateway.key}`, 'devnet.gateway.local')).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x7a69',
    })
  })

  it('neither a prefix nor a Host a network claims: the default network, the first listed (defaultNetwork unset)', async () => {
    for (const host of ['127.0.0.1', 'polygon.gateway.local', undefined])
      assert.deepEqual((await chainIdVia(`/v3/${gateway.key}`, host)).json, {
        jsonrpc: '2.0',
        id: 1,
        result: '0x7a69',
      })
  })

  it('a prefix that names no network: 404 unknown network, not the default one', async () => {
    const response = await chainIdVia(`/polygon/v3/${gateway.key}`)
    assert.equal(response.status, 404)
    // refused from the request's headers: its body is not read, so its id is not known
    assert.deepEqual(response.json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'unknown network' },
    })
  })
})
