import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** Calls the gateway made for clients, without its own head polls. */
const clientCalls = (fake: FakeUpstream, method: string) =>
  fake.requests.filter((request) => request.method === method)

describe('the cache, end to end: coalescing, what is kept, memory bound', () => {
  let node: TestNode
  let counting: FakeUpstream
  let gateway: TestGateway
  let blockHashes: string[]

  before(async () => {
    node = await startTestNode({ loadBlocks: 40 })
    counting = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      upstreams: [counting.url],
      config: { cache: { maxBytes: 64 * 1024 } },
    })
    const head = Number(
      ((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result,
    )
    blockHashes = await Promise.all(
      Array.from({ length: head }, async (_, number) => {
        const { json } = await postJson(
          node.url,
          rpcBody('eth_getBlockByNumber', [`0x${number.toString(16)}`, false]),
        )
        return (json as { result: { hash: string } }).result.hash
      }),
    )
  })
  after(async () => {
    await gateway?.close()
    await counting?.close()
    await node?.stop()
  })

  it('50 identical calls at once: one upstream call, every client its own id and the same result', async () => {
    const hash = blockHashes[5] as string
    const before = clientCalls(counting, 'eth_getBlockByHash').length
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [hash, true], `client-${index}`)),
      ),
    )
    const direct = (await postJson(node.url, rpcBody('eth_getBlockByHash', [hash, true]))).json as {
      result: unknown
    }
    answers.forEach((answer, index) => {
      assert.equal(answer.status, 200)
      assert.deepEqual(answer.json, { jsonrpc: '2.0', id: `client-${index}`, result: direct.result })
    })
    assert.equal(clientCalls(counting, 'eth_getBlockByHash').length - before, 1)
  })

  it('a null answer (not there yet) and an error are asked again every time', async () => {
    const unknown = `0x${'ab'.repeat(32)}`
    const before = clientCalls(counting, 'eth_getBlockByHash').length
    for (let index = 0; index < 3; index++) {
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [unknown, false]))
      assert.deepEqual(json, { jsonrpc: '2.0', id: 1, result: null })
    }
    assert.equal(clientCalls(counting, 'eth_getBlockByHash').length - before, 3)

    counting.behave({
      kind: 'status',
      status: 200,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy"}}',
    })
    const hash = blockHashes[6] as string
    for (let index = 0; index < 2; index++) {
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [hash, false], 9))
      assert.deepEqual(json, { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'busy' } })
    }
    counting.behave({ kind: 'proxy', target: node.url })
    const { json } = await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [hash, false]))
    assert.equal((json as { result: { hash: string } }).result.hash, hash)
  })

  it('memory stays within cache.maxBytes however many answers are kept; recent ones stay', async () => {
    const cache = gateway.app.networks.all[0]?.cache
    assert.ok(cache)
    for (const hash of blockHashes) {
      await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [hash, false]))
      assert.ok(cache.stats.bytes <= 64 * 1024, `${cache.stats.bytes} bytes kept`)
    }
    assert.ok(cache.stats.evictions > 0, 'older answers were evicted')
    const before = clientCalls(counting, 'eth_getBlockByHash').length
    await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [blockHashes.at(-1), false]))
    assert.equal(clientCalls(counting, 'eth_getBlockByHash').length, before, 'the newest answer is a hit')
    await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [blockHashes[0], false]))
    assert.equal(clientCalls(counting, 'eth_getBlockByHash').length, before + 1, 'the oldest was evicted')
  })
})
