import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'

type Answer = { result?: unknown; error?: { code: number; message: string } }

const notFound = { code: -32000, message: 'filter not found' }

describe('filters belong to the key that made them, on every instance', () => {
  let node: TestNode
  let schema: TestSchema
  /** Two gateways on one Postgres schema, in front of one node: as behind a load balancer. */
  let first: TestGateway
  let second: TestGateway
  let owner: string
  let stranger: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    const config = {
      storage: { postgres: schema.url },
      networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
    }
    first = await startTestGateway({ config })
    second = await startTestGateway({ config })
    owner = first.key
    stranger = second.key
    await first.app.keys.refresh()
    await second.app.keys.refresh()
  })
  after(async () => {
    await first?.close()
    await second?.close()
    await schema?.drop()
    await node?.stop()
  })

  async function call(gateway: TestGateway, key: string, method: string, params: unknown[]) {
    const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody(method, params))
    assert.equal(answer.status, 200, answer.text)
    return answer.json as Answer
  }

  async function newFilter(gateway: TestGateway, key: string): Promise<string> {
    const { result } = await call(gateway, key, 'eth_newFilter', [
      { address: node.fixtures.demo, fromBlock: '0x0' },
    ])
    assert.match(String(result), /^0x[0-9a-f]+$/)
    return result as string
  }

  it("another key's filter id is an unknown filter: not read, not removed, on either instance", async () => {
    const id = await newFilter(first, owner)
    for (const gateway of [first, second]) {
      assert.deepEqual((await call(gateway, stranger, 'eth_getFilterLogs', [id])).error, notFound)
      assert.deepEqual((await call(gateway, stranger, 'eth_getFilterChanges', [id])).error, notFound)
      assert.equal((await call(gateway, stranger, 'eth_uninstallFilter', [id])).result, false)
    }
    // the stranger's attempts left it in place: the owner reads it, on either instance
    const logs = (await call(second, owner, 'eth_getFilterLogs', [id])).result as { address: string }[]
    assert.ok(logs.length > 0)
    for (const log of logs) assert.equal(log.address.toLowerCase(), node.fixtures.demo.toLowerCase())
    await mineIncrement(node)
    const changes = (await call(first, owner, 'eth_getFilterChanges', [id])).result as unknown[]
    assert.ok(changes.length > 0, 'the new block’s log')
    assert.equal((await call(second, owner, 'eth_uninstallFilter', [id])).result, true)
    assert.equal((await call(first, owner, 'eth_uninstallFilter', [id])).result, false, 'gone')
    assert.deepEqual((await call(first, owner, 'eth_getFilterLogs', [id])).error, notFound)
  })

  it('an id no key made, or the node’s own id, is unknown too, and never reaches the node', async () => {
    const nodeId = (await nodeRpc(node, 'eth_newBlockFilter')) as string
    for (const id of [nodeId, `0x${'ab'.repeat(32)}`, '0x1']) {
      assert.deepEqual((await call(first, owner, 'eth_getFilterChanges', [id])).error, notFound, id)
      assert.equal((await call(first, owner, 'eth_uninstallFilter', [id])).result, false, id)
    }
    // the node's filter is still there: nobody removed it through the gateway
    assert.equal(await nodeRpc(node, 'eth_uninstallFilter', [nodeId]), true)
  })

  it('a filter id the key did not make is refused for nothing: no credits, single or in a batch', async () => {
    const id = await newFilter(first, owner)
    const post = (body: unknown) => postJson(`${first.url}/v3/${stranger}`, body)
    /** The balance after an eth_chainId of 5 credits. */
    const remaining = async () =>
      Number((await post(rpcBody('eth_chainId'))).headers.get('x-credits-remaining'))
    const before = await remaining()
    for (const [method, answer] of [
      ['eth_getFilterChanges', { error: notFound }],
      ['eth_getFilterLogs', { error: notFound }],
      ['eth_uninstallFilter', { result: false }],
    ] as const) {
      for (const named of [id, `0x${'ab'.repeat(32)}`]) {
        const refused = await post(rpcBody(method, [named]))
        assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 1, ...answer }, `${method} ${named}`)
        assert.equal(refused.headers.get('x-credits-charged'), '0', `${method} ${named}`)
      }
    }
    // a batch of them alone: no envelope either; beside a call that is charged, that call and the envelope
    const alone = await post([rpcBody('eth_getFilterLogs', [id], 1), rpcBody('eth_uninstallFilter', [id], 2)])
    assert.deepEqual(alone.json, [
      { jsonrpc: '2.0', id: 1, error: notFound },
      { jsonrpc: '2.0', id: 2, result: false },
    ])
    assert.equal(alone.headers.get('x-credits-charged'), '0')
    const beside = await post([rpcBody('eth_getFilterLogs', [id], 1), rpcBody('eth_chainId', [], 2)])
    assert.equal(beside.headers.get('x-credits-charged'), String(5 + 80))
    assert.equal(
      before - (await remaining()),
      5 + 80 + 5,
      'only the charged call, its envelope and the second eth_chainId',
    )
    // the owner's own reads of it are charged as ever
    const read = await postJson(`${first.url}/v3/${owner}`, rpcBody('eth_getFilterLogs', [id]))
    assert.equal(read.headers.get('x-credits-charged'), '255')
  })

  it('block and pending-transaction filters are sealed the same way', async () => {
    const id = (await call(first, owner, 'eth_newBlockFilter', [])).result as string
    assert.deepEqual((await call(first, stranger, 'eth_getFilterChanges', [id])).error, notFound)
    await mineIncrement(node)
    const hashes = (await call(second, owner, 'eth_getFilterChanges', [id])).result as string[]
    assert.ok(hashes.length > 0)
    const pending = (await call(first, owner, 'eth_newPendingTransactionFilter', [])).result as string
    assert.deepEqual((await call(first, stranger, 'eth_getFilterChanges', [pending])).error, notFound)
    assert.ok(Array.isArray((await call(first, owner, 'eth_getFilterChanges', [pending])).result))
  })

  it('a filter made under a contracts allowlist is unknown once the allowlist changes', async () => {
    const { key } = await first.app.keyAdmin.create({ plan: 'team' })
    await first.app.keyAdmin.addAllowlistEntries(key.key, 'contracts', [node.fixtures.demo])
    await first.app.keys.refresh()
    const id = await newFilter(first, key.key)
    assert.ok(Array.isArray((await call(first, key.key, 'eth_getFilterLogs', [id])).result))
    await first.app.keyAdmin.addAllowlistEntries(key.key, 'contracts', [`0x${'12'.repeat(20)}`])
    await first.app.keys.refresh()
    assert.deepEqual((await call(first, key.key, 'eth_getFilterLogs', [id])).error, notFound)
  })
})
