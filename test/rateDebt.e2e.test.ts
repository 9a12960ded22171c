import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { type JsonResponse, postJson, rpcBody } from './helpers/postJson.ts'
import { type RateFlow, rateBoundExcess } from './helpers/rateBoundExcess.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

/**
 * A core key (500 credits per second) sending 1,000-call batches: the first is served on a full
 * bucket and leaves it in debt; nothing more is served until the debt is paid (docs/compatibility.md
 * §2), and the 429s say when.
 */
const coreRate = 500
const batchOf = (method: string) => Array.from({ length: 1_000 }, (_, index) => rpcBody(method, [], index))

const planRefusal = {
  jsonrpc: '2.0',
  id: null,
  error: {
    code: 429,
    event: -33200,
    message: 'Too Many Requests',
    details:
      "You have exceeded your plan's credits per second throughput limit. Slow down or upgrade your plan.",
  },
}

const charged = (answer: JsonResponse) => Number(answer.headers.get('x-credits-charged'))
const retryAfter = (answer: JsonResponse) => Number(answer.headers.get('retry-after'))

describe('batches against the per-second limit, one gateway (its clock moved by the test)', () => {
  let node: TestNode
  let gateway: TestGateway
  let nowMs = Date.parse('2026-11-22T10:00:00Z')
  const clock = { now: () => nowMs }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url], clock })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('1,000-call batches a second apart: the first served, the rest 429 until its debt is paid; within the bound over the run', async () => {
    const { key } = await gateway.app.keyAdmin.create({ plan: 'core' })
    await gateway.app.keys.refresh()
    const url = `${gateway.url}/v3/${key.key}`
    const batch = batchOf('eth_blockNumber')
    const startMs = nowMs
    const flows: RateFlow[] = []
    const served: number[] = []

    const first = await postJson(url, batch)
    assert.equal(first.status, 200)
    assert.equal((first.json as unknown[]).length, 1_000)
    assert.equal(charged(first), 80_080, '1,000 x 80 + 80 for the batch')
    flows.push({ atMs: nowMs, credits: charged(first) })
    served.push(nowMs - startMs)

    // 79,580 credits owed: a single call of 80 waits 159.16 s for the debt, 0.16 s for its own cost
    const single = await postJson(url, rpcBody('eth_blockNumber'))
    assert.equal(single.status, 429)
    assert.deepEqual(single.json, { ...planRefusal, id: 1 })
    assert.equal(retryAfter(single), 160)
    assert.equal(charged(single), 0)

    // the security review's run: a batch every second, for 170 seconds
    for (let second = 1; second <= 170; second++) {
      nowMs += 1_000
      const answer = await postJson(url, batch)
      if (answer.status === 200) {
        flows.push({ atMs: nowMs, credits: charged(answer) })
        served.push(nowMs - startMs)
        continue
      }
      assert.equal(answer.status, 429, `second ${second}`)
      assert.deepEqual(answer.json, planRefusal)
      assert.equal(charged(answer), 0)
      // a batch waits for the debt and then a full bucket: 160.16 s after the last one served
      const sinceServedSeconds = (nowMs - startMs - (served.at(-1) ?? 0)) / 1_000
      assert.equal(retryAfter(answer), Math.ceil(160.16 - sinceServedSeconds), `second ${second}`)
    }
    assert.deepEqual(served, [0, 161_000], 'the second batch once the debt was paid and the bucket full')
    assert.ok(
      rateBoundExcess(flows, coreRate) <= 0,
      'credits served within rate x window + the dearest batch',
    )
  })
})

describe('batches against the per-second limit, two gateways on one Redis', () => {
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  const gateways: TestGateway[] = []

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    const config = {
      storage: { postgres: schema.url },
      redis: { url: 'redis://127.0.0.1:6379', keyPrefix: prefix.keyPrefix },
      // a loaded machine must not pass for a Redis down (the limit would then hold per instance)
      metering: { redisTimeoutMs: 10_000 },
    }
    for (let i = 0; i < 2; i++) gateways.push(await startTestGateway({ upstreams: [node.url], config }))
  })
  after(async () => {
    for (const gateway of gateways) await gateway.close()
    await node?.stop()
    await schema?.drop()
    await prefix?.remove()
  })

  /** Redis's clock, which the shared bucket refills by. */
  const redisMs = async () => {
    const [seconds, micros] = await prefix.redis.time()
    return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)
  }

  it('a batch served through one leaves a debt both refuse on until it is paid', async () => {
    const [one, other] = gateways as [TestGateway, TestGateway]
    const { key } = await one.app.keyAdmin.create({ plan: 'core' })
    await other.app.keys.refresh()
    const urls = [one, other].map((gateway) => `${gateway.url}/v3/${key.key}`) as [string, string]
    const batch = batchOf('eth_chainId')
    const startMs = await redisMs()
    const flows: RateFlow[] = []

    const first = await postJson(urls[0], batch)
    assert.equal(first.status, 200)
    assert.equal(charged(first), 5_080, '1,000 x 5 + 80 for the batch')
    flows.push({ atMs: startMs, credits: 5_080 })

    // 4,580 owed: another batch, through either gateway, waits 9.16 s for the debt and 1 s for a full
    // bucket; a single call of 5, 9.17 s (less what passed since: a busy machine may take seconds)
    for (const url of [urls[1], urls[0]]) {
      const refused = await postJson(url, batch)
      assert.equal(refused.status, 429)
      assert.deepEqual(refused.json, planRefusal)
      assert.ok(retryAfter(refused) >= 5 && retryAfter(refused) <= 11, `Retry-After ${retryAfter(refused)}`)
    }
    const single = await postJson(urls[1], rpcBody('eth_chainId'))
    assert.equal(single.status, 429)
    assert.ok(retryAfter(single) >= 5 && retryAfter(single) <= 10, `Retry-After ${retryAfter(single)}`)

    // single calls through both, until one is served: not before the debt is paid
    let turn = 0
    let admitted: JsonResponse | undefined
    await until(
      async () => {
        const answer = await postJson(urls[turn++ % 2] as string, rpcBody('eth_chainId'))
        if (answer.status === 200) admitted = answer
        else assert.equal(answer.status, 429)
        return admitted !== undefined
      },
      'the debt to be paid',
      30_000,
    )
    const admittedMs = await redisMs()
    flows.push({ atMs: admittedMs, credits: charged(admitted as JsonResponse) })
    assert.ok(admittedMs - startMs >= 9_170, `a call served ${admittedMs - startMs} ms after the batch`)
    assert.ok(rateBoundExcess(flows, coreRate) <= 0)
  })
})
