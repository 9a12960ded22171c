import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const account = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

/** tollgate_upstream_hedges_total for the first upstream (the fake, named `slow`). */
async function hedgesOfSlow(gateway: TestGateway): Promise<number | undefined> {
  return (await readMetrics(gateway.url)).value('tollgate_upstream_hedges_total', { upstream: 'slow' })
}

describe('hedging (upstreams.hedge)', () => {
  let node: TestNode
  let slow: FakeUpstream
  const gateways: TestGateway[] = []

  /**
   * A gateway over the slow fake (first) and the node, hedging on or off. With hedging on, the slow
   * attempt's own timeout is longer than the call's deadline: only a hedge can answer in time.
   */
  async function gatewayWith(hedge: boolean) {
    const gateway = await startTestGateway({
      config: {
        upstreams: {
          timeoutMs: 20_000,
          attemptTimeoutMs: hedge ? 60_000 : 600,
          hedge: { enabled: hedge, minDelayMs: 50, maxDelayMs: 100 },
        },
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [
              { url: slow.url, name: 'slow' },
              { url: node.url, name: 'node' },
            ],
          },
        ],
      },
    })
    gateways.push(gateway)
    return gateway
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // the slow upstream never answers eth_getBalance; everything else (head polls) it forwards
    slow = await startFakeUpstream({
      kind: 'forMethods',
      methods: ['eth_getBalance'],
      behaviour: { kind: 'hang' },
      otherwise: node.url,
    })
  })
  after(async () => {
    for (const gateway of gateways) await gateway.close()
    await slow?.close()
    await node?.stop()
  })

  // the clients' balance calls (the history prober asks eth_getBalance of the zero address too)
  const balanceCalls = () =>
    slow.requests.filter((request) => request.method === 'eth_getBalance' && request.params[0] === account)
      .length

  it('an idempotent read the first upstream has not answered after the delay is answered by the next one', async () => {
    const gateway = await gatewayWith(true)
    // a key whose answers say which upstreams each call asked (the route header)
    const { key } = await gateway.app.keyAdmin.create({ ...unlimitedKey, name: 'routed' })
    await gateway.app.keyAdmin.setSecurity(key.key, { routeHeader: 'on' })
    await gateway.app.keys.refresh()
    const expected = (await postJson(node.url, rpcBody('eth_getBalance', [account, 'latest'], 7))).json
    const asked = balanceCalls()
    const response = await postJson(
      `${gateway.url}/v3/${key.key}`,
      rpcBody('eth_getBalance', [account, 'latest'], 7),
    )
    // the slow upstream never answers and its attempt outlives the deadline: the answer is the hedge's
    assert.equal(response.status, 200)
    assert.deepEqual(response.json, expected)
    assert.equal(balanceCalls() - asked, 1, 'the slow upstream was asked first')
    assert.equal(response.headers.get('x-tollgate-upstream'), 'node')
    assert.match(response.headers.get('x-tollgate-attempts') ?? '', /^slow=(?:superseded|pending) \+node=ok$/)
    // and counted: at least this one (on a loaded machine the head tracker's own calls through the
    // pool, its backfill and the finalized block, may wait on the slow fake past the delay and be
    // hedged too)
    assert.ok(((await hedgesOfSlow(gateway)) ?? 0) >= 1)
  })

  it('switched off, the call moves on only when the attempt timeout ends the slow attempt', async () => {
    const gateway = await gatewayWith(false)
    const asked = balanceCalls()
    const response = await postJson(gateway.endpoint, rpcBody('eth_getBalance', [account, 'latest'], 8))
    assert.equal(response.status, 200)
    assert.equal(balanceCalls() - asked, 1)
    const slowMember = gateway.app.networks.all[0]?.pool.members[0]
    const timeouts = slowMember?.attemptDurations.read('timeout').cumulativeCounts.at(-1)
    assert.equal(timeouts, 1, 'the slow attempt ended by its timeout')
    // a node that answers everything else (its health checks) is slow on this call, not down
    assert.deepEqual([slowMember?.failures, slowMember?.breaker.state], [0, 'closed'])
    assert.equal(await hedgesOfSlow(gateway), 0)
  })
})
