import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'

const account = '0x0000000000000000000000000000000000000001'
const json = { 'content-type': 'application/json' }
const asking = { ...json, 'x-tollgate-route': '1' }

/** The route headers of an answer, null where absent. */
function routeOf(headers: Headers) {
  return {
    upstream: headers.get('x-tollgate-upstream'),
    attempts: headers.get('x-tollgate-attempts'),
    cache: headers.get('x-tollgate-cache'),
  }
}

describe('the route header (X-Tollgate-Upstream, -Attempts, -Cache)', () => {
  let node: TestNode
  let flaky: FakeUpstream
  let gateway: TestGateway
  let always: string
  let asked: string
  let blockHash: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    // eth_getBalance fails on the first upstream (503) and is retried on the second, unnamed one
    flaky = await startFakeUpstream({
      kind: 'forMethods',
      methods: ['eth_getBalance'],
      behaviour: { kind: 'status', status: 503 },
      otherwise: node.url,
    })
    gateway = await startTestGateway({
      config: {
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [{ url: flaky.url, name: 'flaky node' }, { url: node.url }],
          },
        ],
        upstreams: { hedge: { enabled: false } },
      },
    })
    const create = async (routeHeader: 'on' | 'asked') => {
      const { key } = await gateway.app.keyAdmin.create({ ...unlimitedKey, name: routeHeader })
      await gateway.app.keyAdmin.setSecurity(key.key, { routeHeader })
      return key.key
    }
    always = await create('on')
    asked = await create('asked')
    await gateway.app.keys.refresh()
    blockHash = ((await nodeRpc(node, 'eth_getBlockByNumber', ['0x1', false])) as { hash: string }).hash
  })
  after(async () => {
    await gateway?.close()
    await flaky?.close()
    await node?.stop()
  })

  const endpoint = (key: string) => `${gateway.url}/v3/${key}`

  it('is never on by default, even when asked for', async () => {
    const response = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'), asking)
    assert.equal(response.status, 200)
    assert.deepEqual(routeOf(response.headers), { upstream: null, attempts: null, cache: null })
  })

  it("names the upstream that answered and each attempt's outcome, never a URL", async () => {
    const response = await postJson(endpoint(always), rpcBody('eth_getBalance', [account, 'latest']))
    assert.equal(response.status, 200)
    // the unnamed upstream is #2, its place in the list; the name's space is written `_`
    assert.deepEqual(routeOf(response.headers), {
      upstream: '#2',
      attempts: 'flaky_node=error #2=ok',
      cache: 'miss',
    })
  })

  it('says when the cache answered: no attempt', async () => {
    const body = rpcBody('eth_getBlockByHash', [blockHash, false])
    const first = await postJson(endpoint(always), body)
    const second = await postJson(endpoint(always), body)
    assert.equal(routeOf(first.headers).cache, 'miss')
    assert.deepEqual(routeOf(second.headers), { upstream: '-', attempts: '-', cache: 'hit' })
  })

  it('for a key set to `asked`: only on requests that send X-Tollgate-Route: 1', async () => {
    const body = rpcBody('eth_chainId')
    const plain = await postJson(endpoint(asked), body)
    assert.equal(plain.headers.get('x-tollgate-upstream'), null)
    const asking1 = await postJson(endpoint(asked), rpcBody('eth_getBlockByNumber', ['0x1', false]), asking)
    assert.equal(asking1.status, 200)
    assert.notEqual(asking1.headers.get('x-tollgate-cache'), null)
  })

  it('a batch lists its calls in call order; a call refused before it ran is `-`', async () => {
    const batch = [
      rpcBody('eth_getBlockByHash', [blockHash, false], 1),
      rpcBody('no_such_method', [], 2),
      rpcBody('eth_getTransactionCount', [account, 'latest'], 3),
    ]
    const response = await postJson(endpoint(always), batch)
    assert.equal(response.status, 200)
    const route = routeOf(response.headers)
    assert.equal(route.cache?.split(', ')[0], 'hit')
    assert.equal(route.cache?.split(', ')[1], '-')
    assert.equal(route.upstream?.split(', ').length, 3)
    assert.equal(route.attempts?.split(', ')[1], '-')
  })

  it('is exposed to browsers when CORS answers', async () => {
    const response = await fetch(endpoint(always), {
      method: 'POST',
      headers: { ...json, origin: 'https://app.example' },
      body: JSON.stringify(rpcBody('eth_chainId')),
    })
    const exposed = response.headers.get('access-control-expose-headers')?.toLowerCase() ?? ''
    for (const name of ['x-tollgate-upstream', 'x-tollgate-attempts', 'x-tollgate-cache']) {
      assert.ok(exposed.includes(name), exposed)
    }
  })
})
