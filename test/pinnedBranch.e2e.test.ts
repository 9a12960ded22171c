import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

// An upstream whose by-number answers come from another branch (a load-balanced backend that has not
// followed a reorg yet) must not get its answer kept under the block the chain has at that number:
// kept answers live as long as their block, so one of the wrong block would be served for good.

const counter = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })
const hex = (number: number) => `0x${number.toString(16)}`
const networkOf = (gateway: TestGateway): Network => gateway.app.networks.all[0] as Network
const isNumber = (ref: unknown) => typeof ref === 'string' && /^0x[0-9a-f]+$/i.test(ref) && ref.length < 66

describe('answers pinned to a block, from an upstream on another branch', () => {
  let chain: TestNode
  let other: TestNode
  let upstream: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    ;[chain, other] = [await startTestNode(), await startTestNode()]
    // the other branch: the same contract, another count, other block hashes
    for (let index = 0; index < 3; index++) await mineIncrement(other)
    await nodeRpc(chain, 'anvil_mine', ['0x3'])
    // eth_call and full blocks by number come from the other branch; everything else (the head
    // tracker's polls and block fetches, calls by hash) from the chain
    upstream = await startFakeUpstream({
      kind: 'rewrite',
      target: chain.url,
      respond: async ({ method, params }) => {
        const byNumber =
          (method === 'eth_call' && isNumber(params[1])) ||
          (method === 'eth_getBlockByNumber' && isNumber(params[0]) && params[1] === true)
        return byNumber ? { result: await nodeRpc(other, method, params) } : undefined
      },
    })
    gateway = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: upstream.url }] }],
        upstreams: { headPollMs: 200 },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await upstream?.close()
    await other?.stop()
    await chain?.stop()
  })

  const via = async (method: string, params: unknown[]) =>
    ((await postJson(gateway.endpoint, rpcBody(method, params))).json as { result?: unknown }).result
  /** Until the gateway's chain has the node's head, and answers that number. */
  async function followed(): Promise<number> {
    const head = Number(await nodeRpc(chain, 'eth_blockNumber'))
    await until(() => networkOf(gateway).head.latest()?.number === BigInt(head), 'the gateway to follow')
    return head
  }

  it("a call on state is asked by the block's hash: the chain's answer, kept", async () => {
    const head = await followed()
    const call = [{ to: chain.fixtures.demo, data: counter }, hex(head)]
    const ours = await nodeRpc(chain, 'eth_call', call)
    assert.notEqual(ours, await nodeRpc(other, 'eth_call', call), 'the branches differ')
    assert.equal(await via('eth_call', call), ours)
    const asked = upstream.requests.filter((request) => request.method === 'eth_call')
    assert.deepEqual(asked.at(-1)?.params[1], { blockHash: networkOf(gateway).head.hashAt(BigInt(head)) })
    await nodeRpc(chain, 'anvil_mine', ['0x1'])
    await followed()
    assert.equal(await via('eth_call', call), ours, 'kept across the new head')
    assert.equal(upstream.requests.filter((request) => request.method === 'eth_call').length, asked.length)
  })

  it("a block of another branch's node is kept only until the next head", async () => {
    const head = await followed()
    const params = [hex(head), true]
    const cache = networkOf(gateway).cache
    assert.ok(cache)
    const misses = cache.stats.misses
    const theirs = (await via('eth_getBlockByNumber', params)) as { hash: string }
    assert.notEqual(theirs.hash, networkOf(gateway).head.hashAt(BigInt(head)), "the other branch's block")
    await nodeRpc(chain, 'anvil_mine', ['0x1'])
    await followed()
    await via('eth_getBlockByNumber', params)
    assert.equal(cache.stats.misses - misses, 2, 'asked again after the new head')
  })
})
