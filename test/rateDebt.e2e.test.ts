import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { accountSubject } from '../src/metering/usageStore.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { type JsonResponse, postJson, rpcBody } from './helpers/postJson.ts'
import { type RateFlow, rateBoundExcess } from './helpers/rateBoundExcess.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'

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
      redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
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

  /**
   * The shared bucket (creditScript.ts) refills by Redis's clock, which a test cannot move: the test
   * moves the bucket instead, setting its last refill (`ts`) back, atomically, as if `ms` had passed.
   * Its time is then Redis's plus all the test moved it by.
   */
  const ageBucket = (bucketKey: string, ms: number) =>
    prefix.redis.eval(
      "redis.call('HSET', KEYS[1], 'ts', tonumber(redis.call('HGET', KEYS[1], 'ts')) - tonumber(ARGV[1]))",
      1,
      bucketKey,
      ms,
    )
  /** The bucket's tokens and its last refill (Redis's clock), as the last exchange that took from it left them. */
  const bucketState = async (bucketKey: string) => {
    const [tokens, stampMs] = await prefix.redis.hmget(bucketKey, 't', 'ts')
    return { tokens: Number(tokens), stampMs: Number(stampMs) }
  }

  it('a batch served through one leaves a debt both refuse on until it is paid', async () => {
    const [one, other] = gateways as [TestGateway, TestGateway]
    const { key } = await one.app.keyAdmin.create({ plan: 'core' })
    // both know the key before the first call (else one may answer it as unknown)
    await Promise.all([one.app.keys.refresh(), other.app.keys.refresh()])
    const urls = [one, other].map((gateway) => `${gateway.url}/v3/${key.key}`) as [string, string]
    const bucketKey = `${prefix.keyPrefix}rate:${accountSubject(key.account.id)}`
    const batch = batchOf('eth_chainId')
    const flows: RateFlow[] = []
    let agedMs = 0
    /** How long, on the bucket's time, the last exchange that took from it came after the batch. */
    let startMs = 0
    const sinceBatchMs = async () => (await bucketState(bucketKey)).stampMs + agedMs - startMs

    const first = await postJson(urls[0], batch)
    assert.equal(first.status, 200)
    assert.equal(charged(first), 5_080, '1,000 x 5 + 80 for the batch')
    const afterBatch = await bucketState(bucketKey)
    assert.equal(afterBatch.tokens, 500 - 5_080, 'a full bucket, in debt by what it could not cover')
    startMs = afterBatch.stampMs
    flows.push({ atMs: startMs, credits: 5_080 })

    // 4,580 owed: another batch, through either gateway, waits 9.16 s for the debt and 1 s for a full
    // bucket; a single call of 5, 9.17 s; less what passed since (a busy machine may take seconds)
    for (const url of [urls[1], urls[0]]) {
      const refused = await postJson(url, batch)
      assert.equal(refused.status, 429)
      assert.deepEqual(refused.json, planRefusal)
      assert.equal(charged(refused), 0)
      assert.equal(retryAfter(refused), Math.ceil((10_160 - (await sinceBatchMs())) / 1_000))
    }

    // single calls through both, the bucket moved on a second before each: refused until the debt
    // is paid, with when it will be; then served
    let admitted: JsonResponse | undefined
    for (let turn = 0; admitted === undefined; turn++) {
      assert.ok(turn < 10, 'served at the latest 10 s on (the test moved the bucket 1 s a turn)')
      await ageBucket(bucketKey, 1_000)
      agedMs += 1_000
      const answer = await postJson(urls[turn % 2] as string, rpcBody('eth_chainId'))
      const sinceMs = await sinceBatchMs()
      if (answer.status === 200) {
        assert.ok(sinceMs >= 9_170, `served ${sinceMs} ms after the batch on the bucket's time`)
        admitted = answer
        flows.push({ atMs: startMs + sinceMs, credits: charged(answer) })
        continue
      }
      assert.equal(answer.status, 429, `turn ${turn}`)
      assert.deepEqual(answer.json, { ...planRefusal, id: 1 })
      assert.ok(sinceMs < 9_170, `refused ${sinceMs} ms after the batch, its debt paid`)
      assert.equal(retryAfter(answer), Math.ceil((9_170 - sinceMs) / 1_000), `turn ${turn}`)
    }
    assert.equal(charged(admitted), 5)
    assert.ok(rateBoundExcess(flows, coreRate) <= 0)
  })
})
