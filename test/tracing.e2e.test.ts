import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './helpers/startOtlpReceiver.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

type Rig = {
  node: TestNode
  flaky: FakeUpstream
  recorder: FakeUpstream
  receiver: OtlpReceiver
  close(): Promise<void>
}

/**
 * A real anvil with two upstreams before it, and an OTLP receiver: `flaky` answers eth_getBalance
 * with a 503 (everything else it forwards), `recorder` forwards everything and records the headers
 * it is sent. The first call of eth_getBalance therefore fails on flaky and is retried on recorder.
 */
async function startRig(loadBlocks: number): Promise<Rig> {
  const node = await startTestNode({ loadBlocks })
  const flaky = await startFakeUpstream({
    kind: 'forMethods',
    methods: ['eth_getBalance'],
    behaviour: { kind: 'status', status: 503 },
    otherwise: node.url,
  })
  const recorder = await startFakeUpstream({ kind: 'proxy', target: node.url })
  const receiver = await startOtlpReceiver()
  return {
    node,
    flaky,
    recorder,
    receiver,
    async close() {
      await receiver.close()
      await flaky.close()
      await recorder.close()
      await node.stop()
    },
  }
}

function gatewayConfig(
  { flaky, recorder }: Pick<Rig, 'flaky' | 'recorder'>,
  tracing: Record<string, unknown>,
) {
  return {
    networks: [
      {
        name: 'devnet',
        chainId: 31337,
        upstreams: [
          { url: flaky.url, name: 'flaky' },
          { url: recorder.url, name: 'recorder' },
        ],
      },
    ],
    upstreams: { hedge: { enabled: false } },
    tracing,
  }
}

const account = '0x0000000000000000000000000000000000000001'
const balanceCall = (id: number) => rpcBody('eth_getBalance', [account, 'latest'], id)

describe('OpenTelemetry traces (http/json)', () => {
  let rig: Rig
  let node: TestNode
  let recorder: FakeUpstream
  let receiver: OtlpReceiver
  let gateway: TestGateway | undefined
  let blockHash: string
  const callerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const callerSpanId = '00f067aa0ba902b7'
  // the W3C example: two vendors' entries, in this order
  const callerTraceState = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'
  const answers: { name: string; status: number }[] = []
  let spans: ReceivedSpan[] = []

  before(async () => {
    rig = await startRig(4)
    ;({ node, recorder, receiver } = rig)
    blockHash = ((await nodeRpc(node, 'eth_getBlockByNumber', ['0x1', false])) as { hash: string }).hash
    gateway = await startTestGateway({
      config: gatewayConfig(rig, {
        enabled: true,
        endpoint: receiver.url,
        protocol: 'http/json',
        serviceName: 'tollgate-test',
      }),
    })
    const traced = {
      'content-type': 'application/json',
      traceparent: `00-${callerTraceId}-${callerSpanId}-01`,
      tracestate: callerTraceState,
    }
    // a retry: flaky's 503, then recorder's answer (the caller's trace continued)
    answers.push({ name: 'retry', status: (await postJson(gateway.endpoint, balanceCall(1), traced)).status })
    // the same block twice: loaded, then kept
    const byHash = rpcBody('eth_getBlockByHash', [blockHash, false])
    answers.push({ name: 'miss', status: (await postJson(gateway.endpoint, byHash)).status })
    answers.push({ name: 'hit', status: (await postJson(gateway.endpoint, byHash)).status })
    // a batch: one trace, a span per call
    const batch = [rpcBody('eth_blockNumber', [], 1), rpcBody('eth_chainId', [], 2)]
    answers.push({ name: 'batch', status: (await postJson(gateway.endpoint, batch)).status })
    // a WebSocket message: a trace of its own
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    try {
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
      const answered = new Promise((resolve) => socket.once('message', resolve))
      socket.send(JSON.stringify(rpcBody('eth_getTransactionCount', [account, 'latest'], 5)))
      await answered
    } finally {
      socket.close()
    }
    // the spans still queued are sent on shutdown
    await gateway.close()
    gateway = undefined
    await until(() => receiver.spans.length > 0, 'spans to reach the receiver')
    spans = receiver.spans
  })
  after(async () => {
    await gateway?.close()
    await rig?.close()
  })

  it('answers as it does untraced', () => {
    for (const answer of answers) assert.equal(answer.status, 200, answer.name)
  })

  it('exports OTLP JSON with the service name', () => {
    assert.ok(receiver.contentTypes.every((type) => type.startsWith('application/json')))
    assert.ok(spans.every((span) => span.service === 'tollgate-test'))
  })

  it("continues the caller's traceparent: same trace id, the caller's span the server span's parent", () => {
    const server = spans.find((span) => span.traceId === callerTraceId && span.name.startsWith('POST'))
    assert.ok(server, 'a server span in the caller trace')
    assert.equal(server.parentSpanId, callerSpanId)
    const children = spans.filter((span) => span.parentSpanId === server.spanId).map((span) => span.name)
    assert.ok(children.includes('tollgate.authenticate'), children.join())
    assert.ok(children.includes('tollgate.meter'), children.join())
    assert.ok(children.includes('eth_getBalance'), children.join())
    assert.equal(server.attributes['tollgate.network'], 'devnet')
  })

  it('shows the retry: one attempt span per upstream, by name, with its outcome; credits on the call', () => {
    const call = spans.find((span) => span.traceId === callerTraceId && span.name === 'eth_getBalance')
    assert.ok(call)
    assert.equal(call.attributes['rpc.method'], 'eth_getBalance')
    assert.equal(call.attributes['tollgate.network'], 'devnet')
    assert.equal(call.attributes['tollgate.upstream'], 'recorder')
    assert.equal(call.attributes['tollgate.attempts'], '2')
    assert.ok(Number(call.attributes['tollgate.credits']) > 0)
    const attempts = spans
      .filter((span) => span.parentSpanId === call.spanId && span.name === 'tollgate.upstream')
      .map((span) => `${span.attributes['tollgate.upstream']}=${span.attributes['tollgate.outcome']}`)
    assert.deepEqual(attempts.sort(), ['flaky=error', 'recorder=ok'])
    // never a URL in any attribute
    for (const span of spans) {
      for (const value of Object.values(span.attributes)) assert.ok(!value.includes('127.0.0.1'), value)
    }
  })

  it("sends the node a traceparent in the caller's trace, naming the attempt's span", () => {
    // the gateway's own calls (head polls, history probes) are not traced: the client's call is
    const index = recorder.requests.findIndex(
      (request) => request.method === 'eth_getBalance' && request.params[0] === account,
    )
    const sent = recorder.received[index]?.headers.traceparent
    assert.equal(typeof sent, 'string')
    const [, traceId, spanId] = (sent as string).split('-')
    assert.equal(traceId, callerTraceId)
    const attempt = spans.find((span) => span.spanId === spanId)
    assert.equal(attempt?.name, 'tollgate.upstream')
    assert.equal(attempt?.attributes['tollgate.upstream'], 'recorder')
  })

  it("passes the caller's tracestate on with the traceparent, as received; none where the caller sent none", () => {
    const index = recorder.requests.findIndex(
      (request) => request.method === 'eth_getBalance' && request.params[0] === account,
    )
    assert.equal(recorder.received[index]?.headers.tracestate, callerTraceState)
    // the client's other calls came without trace context: a traceparent of our own trace, no tracestate
    const untraced = [...rig.flaky.received, ...recorder.received].filter(
      (request) =>
        typeof request.headers.traceparent === 'string' &&
        !request.headers.traceparent.includes(callerTraceId),
    )
    assert.ok(untraced.length > 0, 'calls of traces of our own reached the nodes')
    for (const request of untraced) assert.equal(request.headers.tracestate, undefined)
  })

  it('records the cache: a miss that loads, then a hit with no attempt', () => {
    const calls = spans.filter((span) => span.name === 'eth_getBlockByHash')
    assert.deepEqual(calls.map((span) => span.attributes['tollgate.cache']).sort(), ['hit', 'miss'])
    const hit = calls.find((span) => span.attributes['tollgate.cache'] === 'hit') as ReceivedSpan
    const children = spans.filter((span) => span.parentSpanId === hit.spanId)
    assert.deepEqual(
      children.map((span) => [span.name, span.attributes['tollgate.cache_hit']]),
      [['tollgate.cache', 'true']],
    )
  })

  it('traces a WebSocket message as a trace of its own, its call under it', () => {
    const call = spans.find((span) => span.name === 'eth_getTransactionCount')
    assert.ok(call)
    const message = spans.find((span) => span.spanId === call.parentSpanId)
    assert.equal(message?.name, 'ws message')
    assert.equal(message?.parentSpanId, '')
    assert.match(message?.attributes['tollgate.key'] ?? '', /^k:[0-9a-f]{10}$/)
    assert.equal(message?.attributes['tollgate.network'], 'devnet')
    assert.equal(message?.failed, false)
  })

  it('traces a batch as one trace with a span per call', () => {
    const blockNumber = spans.find((span) => span.name === 'eth_blockNumber')
    const chainId = spans.find((span) => span.name === 'eth_chainId')
    assert.ok(blockNumber && chainId)
    assert.equal(blockNumber.traceId, chainId.traceId)
    assert.equal(blockNumber.parentSpanId, chainId.parentSpanId)
  })
})

describe('OpenTelemetry traces (http/protobuf)', () => {
  let rig: Rig

  before(async () => {
    rig = await startRig(2)
  })
  after(async () => {
    await rig?.close()
  })

  it('exports protobuf the receiver decodes: the same spans', async () => {
    const gateway = await startTestGateway({
      config: gatewayConfig(rig, { endpoint: rig.receiver.url, protocol: 'http/protobuf' }),
    })
    try {
      assert.equal((await postJson(gateway.endpoint, balanceCall(7))).status, 200)
    } finally {
      await gateway.close()
    }
    await until(() => rig.receiver.spans.length > 0, 'spans to reach the receiver')
    assert.ok(rig.receiver.contentTypes.every((type) => type === 'application/x-protobuf'))
    const call = rig.receiver.spans.find((span) => span.name === 'eth_getBalance')
    assert.ok(call, rig.receiver.spans.map((span) => span.name).join())
    assert.equal(call.service, 'tollgate')
    assert.match(call.traceId, /^[0-9a-f]{32}$/)
    const attempts = rig.receiver.spans.filter(
      (span) => span.parentSpanId === call.spanId && span.name === 'tollgate.upstream',
    )
    assert.deepEqual(attempts.map((span) => span.attributes['tollgate.upstream']).sort(), [
      'flaky',
      'recorder',
    ])
  })
})

describe("OpenTelemetry traces: a caller's sampled flag", () => {
  let rig: Rig

  before(async () => {
    rig = await startRig(1)
  })
  after(async () => {
    await rig?.close()
  })

  /** A gateway with sampleRatio 0, sent one call whose traceparent says sampled, then stopped. */
  async function callSampledByCaller(serviceName: string, trusting: boolean): Promise<void> {
    const gateway = await startTestGateway({
      config: gatewayConfig(rig, {
        endpoint: rig.receiver.url,
        protocol: 'http/json',
        serviceName,
        sampleRatio: 0,
        ...(trusting ? { trustCallerSampling: true } : {}),
      }),
    })
    try {
      const traced = {
        'content-type': 'application/json',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      }
      assert.equal((await postJson(gateway.endpoint, rpcBody('eth_chainId', []), traced)).status, 200)
    } finally {
      // what is queued is exported before close resolves
      await gateway.close()
    }
  }

  it('does not decide by default (sampleRatio 0: nothing exported); with trustCallerSampling it does', async () => {
    await callSampledByCaller('untrusting', false)
    await callSampledByCaller('trusting', true)
    await until(() => rig.receiver.spans.some((span) => span.service === 'trusting'), 'the trusting spans')
    const trusted = rig.receiver.spans.filter((span) => span.service === 'trusting')
    assert.ok(trusted.every((span) => span.traceId === '4bf92f3577b34da6a3ce929d0e0e4736'))
    assert.deepEqual(
      rig.receiver.spans.filter((span) => span.service === 'untrusting'),
      [],
    )
  })
})
