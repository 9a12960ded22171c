import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import WebSocket from 'ws'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { PoolMember } from '../src/upstreams/PoolMember.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const timeoutMs = 2_000
/** Faults are found within one attempt; the breaker then keeps calls off the failing upstream. */
const upstreamSettings = {
  timeoutMs,
  attemptTimeoutMs: 250,
  headPollMs: 150,
  breaker: { failures: 3, cooldownMs: 200, maxCooldownMs: 400 },
}

/** What is done to the primary, and how it gets well again (`target`: the node it proxies to). */
type Fault = {
  name: string
  apply(fake: FakeUpstream): Promise<void>
  heal(fake: FakeUpstream, target: string): Promise<void>
}

const proxyAgain = async (fake: FakeUpstream, target: string) => fake.behave({ kind: 'proxy', target })
const faults: Fault[] = [
  { name: 'killed', apply: (fake) => fake.kill(), heal: (fake) => fake.revive() },
  { name: 'stalled', apply: async (fake) => fake.behave({ kind: 'hang' }), heal: proxyAgain },
  {
    name: 'answering 429',
    apply: async (fake) => fake.behave({ kind: 'status', status: 429 }),
    heal: proxyAgain,
  },
]

type Answer = {
  /** What the test was doing when the call was sent (see `Load.phase`). */
  phase: string
  status: number
  json: unknown
  servedBy: string | null
}

type Load = {
  answers: Answer[]
  /** Set by the test; each answer records the phase its call was sent in. */
  phase: string
  /** Lets every worker finish its call in flight, then stops; the answers. */
  stop(): Promise<Answer[]>
}

/**
 * A call the gateway leaves unanswered this long after its own deadline (`timeoutMs`) is hung: it is
 * recorded as a failed answer (status 0) rather than left to hold the test until the runner kills it.
 */
const hungAfterMs = timeoutMs * 10

/** `workers` clients, each sending its next call when the last is answered, until `stop()`. */
function startLoad(
  url: string,
  calls: object[],
  options: { workers: number; headers?: Record<string, string> },
) {
  const headers = { 'content-type': 'application/json', ...options.headers }
  let stopping = false
  const load: Load = {
    answers: [],
    phase: 'before the fault',
    stop: async () => {
      stopping = true
      await running
      return load.answers
    },
  }
  const running = Promise.all(
    Array.from({ length: options.workers }, async (_, worker) => {
      for (let index = worker; !stopping; index++) {
        const phase = load.phase
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers,
            body: JSON.stringify(calls[index % calls.length]),
            signal: AbortSignal.timeout(hungAfterMs),
          })
          const text = await response.text()
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = text
          }
          load.answers.push({
            phase,
            status: response.status,
            json,
            servedBy: response.headers.get('x-served-by'),
          })
        } catch (err) {
          load.answers.push({ phase, status: 0, json: String(err), servedBy: null })
        }
      }
    }),
  )
  return load
}

/** Every call was answered with a result: none failed, none hung (status 0). */
function assertAllAnswered(answers: Answer[], label: string): void {
  const failed = answers.filter(
    (answer) =>
      answer.status !== 200 || typeof answer.json !== 'object' || !('result' in (answer.json as object)),
  )
  assert.deepEqual(failed.slice(0, 3), [], `${label}: ${failed.length} of ${answers.length} failed`)
}

const inPhase = (answers: Answer[], phase: string) => answers.filter((answer) => answer.phase === phase)

/** Calls the gateway sent to a fake upstream, its own head polls (eth_getBlockByNumber) left out. */
const callsTo = (fake: FakeUpstream) =>
  fake.requests.filter((request) => request.method !== 'eth_getBlockByNumber').length

/** Calls a client would retry on another node: reads of blocks, receipts, state and the head. */
function readCalls(node: TestNode): object[] {
  const { fixtures } = node
  return [
    rpcBody('eth_getTransactionReceipt', [fixtures.legacyTx]),
    rpcBody('eth_getStorageAt', [fixtures.demo, '0x0', 'latest']),
    rpcBody('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x0']),
    rpcBody('eth_blockNumber'),
    rpcBody('eth_getBalance', [fixtures.accounts[1], 'latest']),
  ]
}

describe('an upstream pool under faults: calls move to the healthy upstream and come back', () => {
  let node: TestNode
  let primary: FakeUpstream
  let gateway: TestGateway
  let members: readonly PoolMember[]

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    primary = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      upstreams: [primary.url, node.url],
      // every call reaches an upstream
      config: { upstreams: upstreamSettings, cache: { enabled: false } },
    })
    members = gateway.app.networks.all[0]?.pool.members ?? []
  })
  after(async () => {
    await gateway?.close()
    await primary?.close()
    await node?.stop()
  })

  for (const fault of faults) {
    it(`primary ${fault.name} under load: no call fails or hangs, the secondary serves, the primary serves again once healed`, async () => {
      const calls = readCalls(node)
      const load = startLoad(gateway.endpoint, calls, { workers: 8 })
      let answers: Answer[]
      let secondaryBefore = 0
      try {
        const served = callsTo(primary)
        await until(() => callsTo(primary) >= served + 8, 'the primary to serve the load')
        await fault.apply(primary)
        // every call sent from now on meets the fault: only the secondary can answer it with a result
        secondaryBefore = members[1]?.requests ?? 0
        load.phase = 'primary down'
        await until(() => members[0]?.breaker.state === 'open', 'the breaker to take the primary out of use')
        await until(
          () => inPhase(load.answers, 'primary down').length >= 40,
          'calls answered while the primary is down',
        )
      } finally {
        answers = await load.stop()
      }
      assertAllAnswered(answers, fault.name)
      const servedDown = inPhase(answers, 'primary down').length
      assert.ok(servedDown >= 40)
      // the secondary answered them: the pool counts its calls (each answered call is one at least)
      const secondaryCalls = (members[1]?.requests ?? 0) - secondaryBefore
      assert.ok(
        secondaryCalls >= servedDown,
        `${secondaryCalls} calls to the secondary for ${servedDown} answers`,
      )
      assert.equal(members[0]?.breaker.state, 'open', 'the primary is out of use')

      // once healthy again, the primary gets the traffic back: each call goes to it
      await fault.heal(primary, node.url)
      await until(() => members[0]?.breaker.state === 'closed', 'the primary to be back in use')
      const before = callsTo(primary)
      for (let index = 0; index < 2 * calls.length; index++) {
        const response = await postJson(gateway.endpoint, calls[index % calls.length])
        assert.equal(response.status, 200)
        assert.ok('result' in (response.json as object), `${fault.name}, healed: ${response.text}`)
        assert.equal(
          callsTo(primary),
          before + index + 1,
          `${fault.name}, healed: call ${index} went to the primary`,
        )
      }
    })
  }

  it('a revert is an answer: sent once, never retried or moved to another upstream', async () => {
    const before = primary.requests.length
    const call = {
      from: node.fixtures.accounts[1],
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
    }
    const response = await postJson(gateway.endpoint, rpcBody('eth_call', [call, 'latest']))
    assert.equal(response.status, 200)
    assert.equal((response.json as { error: { code: number } }).error.code, 3)
    const sent = primary.requests.slice(before).filter((request) => request.method === 'eth_call')
    assert.equal(sent.length, 1)
  })
})

describe('partner failover (docs/compatibility.md §7)', () => {
  let node: TestNode
  let primary: FakeUpstream
  let partner: FakeUpstream
  let gateway: TestGateway
  let growth: string
  let growthAlwaysFailover: string
  let team: string
  /** A custom plan (failover included) with limits no load here reaches: growth's 40,000 credits/s would. */
  let custom: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    primary = await startFakeUpstream({ kind: 'proxy', target: node.url })
    partner = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      config: {
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [{ url: primary.url }],
            partners: [{ url: `${partner.url}/v3/partner-secret-key`, name: 'partner-a' }],
          },
        ],
        upstreams: upstreamSettings,
        cache: { enabled: false },
      },
    })
    const create = async (plan: 'growth' | 'team', failover = false) =>
      (await gateway.app.keyAdmin.create({ plan, name: `${plan}-${failover}`, failover })).key.key
    growth = await create('growth')
    growthAlwaysFailover = await create('growth', true)
    custom = (await gateway.app.keyAdmin.create(unlimitedKey)).key.key
    team = await create('team')
    await gateway.app.keys.refresh()
  })
  after(async () => {
    await gateway?.close()
    await primary?.close()
    await partner?.close()
    await node?.stop()
  })

  const endpoint = (key: string) => `${gateway.url}/v3/${key}`
  const withFailover = { 'content-type': 'application/json', 'enable-failover': 'true' }

  it('while the primary is healthy, the partner is never asked', async () => {
    const response = await postJson(
      endpoint(growth),
      rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx]),
      withFailover,
    )
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('x-served-by'), null)
    assert.equal(partner.requests.length, 0)
  })

  it('primary stalled under load: eligible calls with Enable-Failover are answered by the partner, none fails or hangs', async () => {
    const calls = [
      rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx]),
      rpcBody('eth_getStorageAt', [node.fixtures.demo, '0x0', 'latest']),
      rpcBody('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x0']),
    ]
    const load = startLoad(endpoint(custom), calls, { workers: 8, headers: { 'enable-failover': 'true' } })
    let answers: Answer[]
    try {
      await until(() => load.answers.length >= 8, 'the primary to serve the load')
      primary.behave({ kind: 'hang' })
      // every call sent from now on meets the stalled primary: only the partner can answer it
      load.phase = 'primary stalled'
      await until(
        () => inPhase(load.answers, 'primary stalled').length >= 40,
        'calls answered while the primary stalls',
      )
    } finally {
      answers = await load.stop()
      primary.behave({ kind: 'proxy', target: node.url })
    }
    assertAllAnswered(answers, 'stalled primary')
    assert.ok(
      inPhase(answers, 'before the fault').some((answer) => answer.servedBy === null),
      'the primary served',
    )
    const stalled = inPhase(answers, 'primary stalled')
    assert.deepEqual(
      stalled.filter((answer) => answer.servedBy !== 'partner'),
      [],
      'every call sent while the primary stalls is answered by the partner',
    )
  })

  it('primary killed: eligible calls fail over; ineligible ones, and keys that may not, get a quick 503', async () => {
    await primary.kill()
    try {
      const receipt = rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx])
      const direct = await postJson(node.url, receipt)
      const served = await postJson(endpoint(growth), receipt, withFailover)
      assert.equal(served.status, 200)
      assert.deepEqual(served.json, direct.json)
      assert.equal(served.headers.get('x-served-by'), 'partner')
      assert.ok(!served.text.includes(partner.url) && !served.text.includes('partner-a'))

      const switchedOn = await postJson(endpoint(growthAlwaysFailover), receipt)
      assert.equal(switchedOn.status, 200)
      assert.equal(switchedOn.headers.get('x-served-by'), 'partner')

      for (const [label, key, body, headers] of [
        ['no Enable-Failover header', growth, receipt, undefined],
        ['a plan without failover', team, receipt, withFailover],
        ['an ineligible method', growth, rpcBody('eth_blockNumber'), withFailover],
      ] as const) {
        const partnerAsked = partner.requests.length
        const refused = await postJson(endpoint(key), body, headers)
        // 503 "no upstream available", not 504 "timed out": the gateway did not wait out its deadline
        assert.equal(refused.status, 503, label)
        assert.deepEqual(
          (refused.json as { error: unknown }).error,
          { code: -32603, message: 'no upstream available, try again later' },
          label,
        )
        assert.equal(refused.headers.get('x-served-by'), null, label)
        assert.equal(partner.requests.length, partnerAsked, `${label}: the partner was not asked`)
      }
    } finally {
      await primary.revive()
    }
  })

  it('over WebSocket too: Enable-Failover on the upgrade sends eligible calls to the partner', async () => {
    await primary.kill()
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${growth}`, {
      headers: { 'enable-failover': 'true' },
    })
    try {
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
      const answer = new Promise<unknown>((resolve) =>
        socket.once('message', (data) => resolve(JSON.parse(String(data)))),
      )
      socket.send(JSON.stringify(rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 7)))
      const direct = await postJson(
        node.url,
        rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 7),
      )
      assert.deepEqual(await answer, direct.json)
    } finally {
      socket.close()
      await primary.revive()
    }
  })

  it('only the JSON-RPC call reaches the partner: no client headers, address or key', async () => {
    assert.ok(partner.received.length > 0)
    for (const { path, headers } of partner.received) {
      assert.equal(path, '/v3/partner-secret-key')
      for (const name of ['enable-failover', 'origin', 'authorization', 'x-forwarded-for', 'cookie']) {
        assert.equal(headers[name], undefined, name)
      }
      assert.ok(!JSON.stringify(headers).includes(growth), 'the client key')
    }
  })

  it('usage records the calls a partner served', async () => {
    await gateway.app.meter.flush()
    const rows = await gateway.app.usageStore.queryUsage({ fromDay: '2000-01-01' })
    const failoverCalls = rows.reduce((sum, row) => sum + row.failoverCalls, 0)
    const partnerServed = partner.requests.filter(
      (request) => request.method !== 'eth_getBlockByNumber',
    ).length
    assert.ok(failoverCalls > 0)
    assert.equal(failoverCalls, partnerServed)
  })
})

describe('heads across upstreams: lagging upstreams are kept off head calls, the head never goes back', () => {
  let node: TestNode
  let behind: FakeUpstream
  let gateway: TestGateway
  let head: bigint

  /** An upstream of the same chain that is `lag` blocks behind the node. */
  const lagging = (lag: bigint) => (request: { method: string; params: unknown[] }) => {
    if (request.method === 'eth_blockNumber') return `0x${(head - lag).toString(16)}`
    if (request.method === 'eth_getBlockByNumber' && request.params[0] === 'latest') {
      return { number: `0x${(head - lag).toString(16)}`, gasLimit: '0x1c9c380', hash: `0x${'11'.repeat(32)}` }
    }
    return undefined
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    head = BigInt(((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result)
    behind = await startFakeUpstream({ kind: 'rewrite', target: node.url, respond: lagging(5n) })
    gateway = await startTestGateway({
      // the lagging upstream first: it would get every call if lag did not count
      upstreams: [behind.url, node.url],
      config: { upstreams: { ...upstreamSettings, maxLagBlocks: 2 }, cache: { enabled: false } },
    })
  })
  after(async () => {
    await gateway?.close()
    await behind?.close()
    await node?.stop()
  })

  it('head-dependent calls skip an upstream 5 blocks behind; calls pinned to a hash still use it', async () => {
    behind.requests.length = 0
    for (let index = 0; index < 20; index++) {
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'))
      assert.equal(BigInt((json as { result: string }).result), head)
    }
    const latest = await postJson(
      gateway.endpoint,
      rpcBody('eth_getBalance', [node.fixtures.accounts[1], 'latest']),
    )
    assert.ok('result' in (latest.json as object))
    const asked = behind.requests.filter((request) => request.method !== 'eth_getBlockByNumber')
    assert.deepEqual(asked, [], 'the lagging upstream got head-dependent calls')

    const receipt = (await postJson(node.url, rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx])))
      .json as { result: { blockHash: string } }
    await postJson(gateway.endpoint, rpcBody('eth_getBlockByHash', [receipt.result.blockHash, false]))
    assert.equal(behind.requests.filter((request) => request.method === 'eth_getBlockByHash').length, 1)
  })

  it('an upstream that caught up is used again; one a block behind the head never makes eth_blockNumber go back', async () => {
    behind.behave({ kind: 'rewrite', target: node.url, respond: lagging(1n) })
    const members = gateway.app.networks.all[0]?.pool.members ?? []
    await until(() => members[0]?.head === head - 1n, 'the head poll to see the upstream 1 block behind')
    const seen: bigint[] = []
    for (let index = 0; index < 20; index++) {
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'))
      seen.push(BigInt((json as { result: string }).result))
    }
    // within maxLagBlocks it may serve, but the upstream at the head is preferred, and nothing goes back
    assert.deepEqual(new Set(seen), new Set([head]))

    // the upstream at the head fails: the one behind answers, and the head the clients saw holds.
    // The head poll (every 150 ms) may find the upstream at the head well again before the call: then
    // it serves, which proves nothing here, and the failure is noted again until the lagging one answers
    const askedBehind = () => behind.requests.filter((request) => request.method === 'eth_blockNumber').length
    let servedBehind = false
    for (let attempt = 0; attempt < 20 && !servedBehind; attempt++) {
      const before = askedBehind()
      ;(members[1] as PoolMember).noteProbeFailure('test: down')
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'))
      assert.equal(BigInt((json as { result: string }).result), head)
      servedBehind = askedBehind() > before
    }
    assert.ok(servedBehind, 'the lagging one answered')
  })

  it('filters keep to the first healthy upstream in config order, wherever the head is', async () => {
    const members = gateway.app.networks.all[0]?.pool.members ?? []
    behind.behave({ kind: 'rewrite', target: node.url, respond: lagging(1n) })
    await until(() => members.every((member) => member.breaker.state === 'closed'), 'both upstreams in use')
    behind.requests.length = 0
    const created = await postJson(gateway.endpoint, rpcBody('eth_newBlockFilter'))
    const id = (created.json as { result: string }).result
    assert.match(id, /^0x[0-9a-f]+$/)
    for (let index = 0; index < 3; index++) {
      const changes = await postJson(gateway.endpoint, rpcBody('eth_getFilterChanges', [id]))
      assert.ok(Array.isArray((changes.json as { result: unknown }).result), JSON.stringify(changes.json))
    }
    const methods = behind.requests
      .map((request) => request.method)
      .filter((method) => method.includes('Filter'))
    assert.deepEqual(methods, [
      'eth_newBlockFilter',
      'eth_getFilterChanges',
      'eth_getFilterChanges',
      'eth_getFilterChanges',
    ])
  })
})

describe("eth_blockNumber (the head model's) never goes below a head already shown", () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it("the head model's number, lower than the shown head, is raised to it on every call", async () => {
    const network = gateway.app.networks.all[0]
    assert.ok(network)
    const head = BigInt(
      ((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result,
    )
    // another upstream, ahead of this one, has already told a client of head + 10
    await network.head.show(head + 10n)
    await until(() => network.head.blockNumber() === head, 'the head model to have the head')
    for (let index = 0; index < 3; index++) {
      const { json } = await postJson(gateway.endpoint, rpcBody('eth_blockNumber', [], index))
      assert.deepEqual(json, { jsonrpc: '2.0', id: index, result: `0x${(head + 10n).toString(16)}` })
    }
  })
})
