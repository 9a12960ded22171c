import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const hex = (value: bigint) => `0x${value.toString(16)}`
/** The core plan's credits per second (docs/plans.md), and eth_getLogs' price. */
const coreRate = 500
const getLogsCredits = 255
/** The widest range the upstream answers: besu's refusal, which states no width (the range is halved). */
const limitBlocks = 100n
/** Each client's queries: twice what the upstream answers. */
const queryBlocks = 200n
/** How long the clients send new queries, and how many send at once. */
const sendingMs = 5_000
const clients = 3

type Filter = { fromBlock: string; toBlock: string }

/**
 * Real anvil behind a limiter that refuses eth_getLogs ranges wider than 100 blocks as besu does (the
 * fake only for the refusal): a core key's wide queries are split, and the node work that causes is
 * held to what the key's rate pays for, at eth_getLogs' price for each upstream call (docs/plans.md).
 */
describe("a core key's split eth_getLogs is held to its rate (docs/plans.md)", () => {
  let node: TestNode
  let limiter: FakeUpstream
  let gateway: TestGateway
  let head: bigint

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // twelve logs, a hundred empty blocks after each
    for (let index = 0; index < 12; index++) {
      await mineIncrement(node)
      await nodeRpc(node, 'anvil_mine', [hex(limitBlocks)])
    }
    head = BigInt((await nodeRpc(node, 'eth_blockNumber')) as string)
    limiter = await startFakeUpstream({
      kind: 'refuseOr',
      target: node.url,
      refuse: (request) => {
        if (request.method !== 'eth_getLogs') return undefined
        const { fromBlock, toBlock } = request.params[0] as Filter
        if (BigInt(toBlock) - BigInt(fromBlock) + 1n <= limitBlocks) return undefined
        return { error: { code: -32005, message: 'Requested range exceeds maximum RPC range limit' } }
      },
    })
    gateway = await startTestGateway({
      upstreams: [limiter.url],
      config: {
        // every chunk reaches the limiter; a query the rate cannot pay for in 4 s is refused
        cache: { enabled: false },
        upstreams: { headPollMs: 600_000, timeoutMs: 4_000 },
      },
      key: { plan: 'core', name: 'core' },
    })
  })
  after(async () => {
    await gateway?.close()
    await limiter?.close()
    await node?.stop()
  })

  it(`${clients} clients sending ${queryBlocks}-block queries for ${sendingMs / 1000} s: no more upstream eth_getLogs than ${coreRate} credits a second pay for at ${getLogsCredits}, each charged`, async (t) => {
    const logCalls = () => limiter.requests.filter((request) => request.method === 'eth_getLogs')
    const answers: { status: number; charged: number; logs: number | undefined }[] = []
    const startedMs = performance.now()
    let query = 0
    const client = async () => {
      while (performance.now() - startedMs < sendingMs) {
        const from = 1n + (BigInt(query++ * 37) % (head - queryBlocks))
        const filter = { fromBlock: hex(from), toBlock: hex(from + queryBlocks - 1n) }
        const answer = await postJson(gateway.endpoint, rpcBody('eth_getLogs', [filter], query))
        const { result } = answer.json as { result?: unknown[] }
        answers.push({
          status: answer.status,
          charged: Number(answer.headers.get('x-credits-charged')),
          logs: result?.length,
        })
      }
    }
    await Promise.all(Array.from({ length: clients }, client))
    const elapsedMs = performance.now() - startedMs

    // every upstream call is charged (chunks still on their way when an answer went included), but a
    // chunk that failed without a node's answer (a 504 at the deadline), free as any such call
    const charged = answers.reduce((sum, answer) => sum + answer.charged, 0)
    const failedUpstream = answers.filter((answer) => answer.status >= 500).length
    await until(() => logCalls().length * getLogsCredits >= charged, `${charged} credits of upstream calls`)
    const upstreamCalls = logCalls().length
    const free = upstreamCalls - charged / getLogsCredits
    // the bucket is full at the start (one second's worth) and refills at the rate; a free call's
    // credits go back to it
    const paidFor = Math.floor((coreRate + (coreRate * elapsedMs) / 1000) / getLogsCredits)
    const served = answers.filter((answer) => answer.logs !== undefined)
    const statuses = answers.map((answer) => answer.status)
    t.diagnostic(
      `${answers.length} queries in ${Math.round(elapsedMs)} ms: ${served.length} answered, ` +
        `${statuses.filter((status) => status === 429).length} 429, ${failedUpstream} 5xx; ` +
        `${upstreamCalls} upstream eth_getLogs (${paidFor} paid for by the rate, ${free} free), ` +
        `${charged} credits charged`,
    )
    assert.ok(upstreamCalls <= paidFor + free, `${upstreamCalls} upstream calls, ${paidFor} paid for`)
    // each answer that failed upstream leaves at most the chunks it had in flight (4) free
    assert.ok(free <= 4 * failedUpstream, `${free} upstream calls not charged`)
    assert.ok(served.length >= 2, `queries answered with their logs (${served.length})`)
    assert.ok(
      served.every((answer) => answer.charged >= 2 * getLogsCredits),
      'each answer charged for its chunks',
    )
    assert.ok(
      statuses.every((status) => status === 200 || status === 429 || status === 504),
      `answered, refused by the rate, or out of time: ${statuses}`,
    )
    // halving learned the width that worked: only the first queries were asked whole
    const refused = logCalls().filter((request) => {
      const { fromBlock, toBlock } = request.params[0] as Filter
      return BigInt(toBlock) - BigInt(fromBlock) + 1n > limitBlocks
    })
    assert.ok(refused.length <= clients, `${refused.length} whole ranges asked`)
  })

  it('a batch of 100 wide queries on a core key: at most one upstream call each, the one its admission paid for; the further chunks refused, and a first chunk the split stopped free', async (t) => {
    const { key } = await gateway.app.keyAdmin.create({ plan: 'core', name: 'batch' })
    await gateway.app.keys.refresh()
    const before = limiter.requests.filter((request) => request.method === 'eth_getLogs').length
    const batch = Array.from({ length: 100 }, (_, index) => {
      const from = 1n + BigInt(index * 7)
      return rpcBody('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(from + queryBlocks - 1n) }], index)
    })
    const answer = await postJson(`${gateway.url}/v3/${key.key}`, batch)
    assert.equal(answer.status, 200)
    const refusals = (answer.json as { error?: { code: number } }[]).filter(
      (call) => call.error?.code === 429,
    )
    assert.equal(refusals.length, 100, 'the rate, in debt for the batch, pays for no second chunk in time')
    const batchCalls = () =>
      limiter.requests.filter((request) => request.method === 'eth_getLogs').length - before
    const charged = Number(answer.headers.get('x-credits-charged'))
    t.diagnostic(`a batch of 100: ${batchCalls()} upstream eth_getLogs, ${charged} credits`)
    assert.ok(batchCalls() <= 100, `at most the first chunk of each call (${batchCalls()})`)
    // a first chunk a node answered before its split ended is charged (and then the batch's 80);
    // one the split's end stopped on its way is free
    const answered = batchCalls()
    assert.ok(
      charged <= answered * getLogsCredits + (answered > 0 ? 80 : 0),
      `${charged} credits for at most ${answered} chunks at the upstream`,
    )
  })
})
