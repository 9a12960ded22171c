import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './helpers/startOtlpReceiver.ts'
import { startTestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const account = '0x0000000000000000000000000000000000000001'
const callerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736'
const validParent = `00-${callerTraceId}-00f067aa0ba902b7-01`

/**
 * What a trace promises at its edges: a client going away is not a failure, a malformed or
 * repeated traceparent starts a trace of our own (the caller's tracestate dropped with it), and a
 * partner never gets a traceparent or a tracestate.
 */
describe('OpenTelemetry traces: a client gone, a bad traceparent, a partner', () => {
  let node: TestNode
  let primary: FakeUpstream
  let partner: FakeUpstream
  let receiver: OtlpReceiver
  const statuses: Record<string, number> = {}
  let spans: ReceivedSpan[] = []

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    // eth_getBalance never answered: the client gives up first
    primary = await startFakeUpstream({
      kind: 'forMethods',
      methods: ['eth_getBalance'],
      behaviour: { kind: 'hang' },
      otherwise: node.url,
    })
    partner = await startFakeUpstream({ kind: 'proxy', target: node.url })
    receiver = await startOtlpReceiver()
    const gateway = await startTestGateway({
      config: {
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [{ url: primary.url, name: 'primary' }],
            partners: [{ url: partner.url, name: 'partner-a' }],
          },
        ],
        upstreams: { hedge: { enabled: false }, breaker: { failures: 1, cooldownMs: 60_000 } },
        cache: { enabled: false },
        tracing: { endpoint: receiver.url, protocol: 'http/json' },
      },
    })
    try {
      const traced = (traceparent: string) => ({
        'content-type': 'application/json',
        traceparent,
        tracestate: 'rojo=00f067aa0ba902b7',
      })
      const chainId = (id: number, traceparent: string) =>
        postJson(gateway.endpoint, rpcBody('eth_chainId', [], id), traced(traceparent))
      statuses.malformed = (await chainId(11, `00-${callerTraceId}-zz`)).status
      statuses.repeated = (await chainId(12, `${validParent}, ${validParent}`)).status

      const abort = new AbortController()
      const gone = fetch(gateway.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rpcBody('eth_getBalance', [account, 'latest'], 13)),
        signal: abort.signal,
      }).catch(() => 'aborted')
      await until(() => primary.requests.some((request) => request.id === 13), 'the call at the node')
      abort.abort()
      assert.equal(await gone, 'aborted')

      // the primary dead: a key that may fail over is answered by the partner
      await primary.kill()
      const { key } = (await gateway.app.keyAdmin.create({ plan: 'growth', name: 'f', failover: true })).key
      await gateway.app.keys.refresh()
      const receipt = rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 14)
      statuses.partner = (await postJson(`${gateway.url}/v3/${key}`, receipt, traced(validParent))).status
    } finally {
      // the cancelled call ends, then what is queued is exported
      await gateway.close()
    }
    await until(() => receiver.spans.length > 0, 'spans to reach the receiver')
    spans = receiver.spans
  })
  after(async () => {
    await receiver?.close()
    await primary?.close()
    await partner?.close()
    await node?.stop()
  })

  const serverSpanOf = (method: string) => {
    const call = spans.find((span) => span.name === method)
    assert.ok(call, spans.map((span) => span.name).join())
    const server = spans.find((span) => span.spanId === call.parentSpanId)
    assert.ok(server, `the server span of ${method}`)
    return { call, server }
  }

  it("a malformed or repeated traceparent: answered, in a new root trace, the caller's tracestate not passed on", () => {
    assert.equal(statuses.malformed, 200)
    assert.equal(statuses.repeated, 200)
    const servers = spans.filter((span) => span.name.startsWith('POST') && span.parentSpanId === '')
    const calls = spans.filter((span) => span.name === 'eth_chainId')
    assert.equal(calls.length, 2)
    for (const call of calls) {
      const server = servers.find((span) => span.spanId === call.parentSpanId)
      assert.ok(server, 'a root server span')
      assert.notEqual(server.traceId, callerTraceId)
    }
    const sent = primary.received.filter((_, index) =>
      [11, 12].includes(primary.requests[index]?.id as number),
    )
    assert.equal(sent.length, 2)
    for (const { headers } of sent) {
      const traceId = String(headers.traceparent).split('-')[1]
      assert.ok(
        calls.some((call) => call.traceId === traceId),
        'the new trace goes to the node',
      )
      assert.equal(headers.tracestate, undefined)
    }
  })

  it('a client gone: the attempt is cancelled, and no span is an error', () => {
    const { call, server } = serverSpanOf('eth_getBalance')
    assert.equal(call.attributes['tollgate.client_gone'], 'true')
    assert.equal(call.attributes['error.type'], undefined)
    assert.equal(call.failed, false)
    assert.equal(server.failed, false)
    const attempts = spans.filter(
      (span) => span.parentSpanId === call.spanId && span.name === 'tollgate.upstream',
    )
    assert.deepEqual(
      attempts.map((span) => [span.attributes['tollgate.outcome'], span.failed]),
      [['cancelled', false]],
    )
  })

  it('a partner never gets a traceparent; its attempt is a span in the trace', () => {
    assert.equal(statuses.partner, 200)
    assert.ok(partner.received.length > 0, 'the partner was asked')
    for (const request of partner.received) {
      assert.equal(request.headers.traceparent, undefined)
      assert.equal(request.headers.tracestate, undefined)
    }
    const { call, server } = serverSpanOf('eth_getTransactionReceipt')
    assert.equal(server.traceId, callerTraceId)
    assert.equal(call.attributes['tollgate.partner'], 'true')
    const attempts = spans.filter(
      (span) => span.parentSpanId === call.spanId && span.name === 'tollgate.upstream',
    )
    assert.ok(attempts.some((span) => span.attributes['tollgate.partner'] === 'true'))
  })
})
