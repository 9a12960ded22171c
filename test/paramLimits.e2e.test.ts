import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { mineIncrement, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const addressAt = (at: number) => `0x${(at + 1).toString(16).padStart(40, '0')}`

type Message = {
  id?: number
  result?: unknown
  error?: { code: number; message: string }
  params?: { subscription: string; result: unknown }
}

/** A raw WebSocket client that records every message. */
async function connect(url: string) {
  const socket = new WebSocket(url)
  const messages: Message[] = []
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Message))
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  let nextId = 1
  const call = async (method: string, params: unknown[]) => {
    const id = nextId++
    socket.send(JSON.stringify(rpcBody(method, params, id)))
    await until(() => messages.some((message) => message.id === id), `the answer to ${method}`)
    return messages.find((message) => message.id === id) as Message
  }
  return { socket, messages, call }
}

describe('parameters past their limits never reach a node (docs/compatibility.md §7)', () => {
  let node: TestNode
  /** Between the gateway and a real anvil: records every call the gateway sent on. */
  let upstream: FakeUpstream
  let gateway: TestGateway
  const sent = (method: string) => upstream.requests.filter((request) => request.method === method).length
  const post = (method: string, params: unknown[], network = 'devnet') =>
    postJson(`${gateway.url}/${network}/v3/${gateway.key}`, rpcBody(method, params))

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    upstream = await startFakeUpstream({ kind: 'proxy', target: node.url })
    const on = (name: string, limits: object) => ({
      name,
      chainId: 31337,
      upstreams: [{ url: upstream.url }],
      ...limits,
    })
    gateway = await startTestGateway({
      config: {
        networks: [on('devnet', {}), on('narrow', { maxLogsBlockRange: 1 })],
        cache: { enabled: false },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await upstream?.close()
    await node?.stop()
  })

  it('eth_feeHistory with 400,000 reward percentiles (a 1.2 MB body) is -32602 for 5 credits; the node never sees it', async () => {
    const percentiles = Array.from({ length: 400_000 }, () => 50)
    const refused = await post('eth_feeHistory', ['0x4', 'latest', percentiles])
    assert.equal(refused.status, 200)
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'invalid argument 2: too many reward percentiles, the limit is 100' },
    })
    assert.equal(refused.headers.get('x-credits-charged'), '5')
    const tooLong = await post('eth_feeHistory', ['0x401', 'latest', [50]])
    assert.deepEqual((tooLong.json as Message).error, {
      code: -32602,
      message: 'invalid argument 0: block count too large, the limit is 1024 blocks',
    })
    assert.equal(sent('eth_feeHistory'), 0)
    // at the limits the call goes through, and the node answers it: the one call it ever got
    const atLimits = await post('eth_feeHistory', [
      '0x400',
      'latest',
      Array.from({ length: 100 }, (_, at) => at),
    ])
    const { reward } = (atLimits.json as { result: { reward: unknown[][] } }).result
    assert.equal(reward[0]?.length, 100)
    assert.equal(sent('eth_feeHistory'), 1)
  })

  it('a JavaScript tracer and an oversized trace_filter are refused before any node is asked', async () => {
    const tracer =
      '{data: [], fault: function(log) {}, step: function(log) { this.data.push(log.op.toString()) }, result: function() { return this.data }}'
    // under any name geth reads as `tracer`
    for (const name of ['tracer', 'Tracer']) {
      const traced = await post('debug_traceTransaction', [`0x${'12'.repeat(32)}`, { [name]: tracer }])
      assert.deepEqual((traced.json as Message).error, {
        code: -32602,
        message:
          "invalid argument 1: expected tracer to be one of the node's built-in tracers by name, such as callTracer",
      })
    }
    assert.equal(sent('debug_traceTransaction'), 0)
    // no fromBlock is the first block: from 0 to the head is over this network's 1-block range
    const filtered = await post('trace_filter', [{ toBlock: 'latest' }], 'narrow')
    assert.deepEqual((filtered.json as Message).error, {
      code: -32602,
      message: 'invalid argument 0: block range too large, the limit is 1 blocks',
    })
    assert.equal(sent('trace_filter'), 0)
  })

  it('a block range under names geth reads as fromBlock and toBlock is held to the limit', async () => {
    for (const filter of [
      { FromBlock: 'earliest', TOBLOCK: 'latest' },
      { fromBlock: 'latest', toBlock: 'latest', FROMBLOCK: 'earliest' },
    ]) {
      const logs = await post('eth_getLogs', [filter], 'narrow')
      assert.deepEqual((logs.json as Message).error, {
        code: -32602,
        message: 'invalid argument 0: block range too large, the limit is 1 blocks',
      })
    }
    assert.equal(sent('eth_getLogs'), 0)
    // geth reads the last: latest, within the range, sent on under its exact name
    const within = await post('eth_getLogs', [{ FromBlock: 'earliest', fromBlock: 'latest' }], 'narrow')
    assert.deepEqual((within.json as Message).result, [])
    const forwarded = upstream.requests.filter((request) => request.method === 'eth_getLogs')
    assert.deepEqual(
      forwarded.map((request) => request.params),
      [[{ fromBlock: 'latest' }]],
    )
  })

  it('a logs subscription over 1000 addresses is refused over WebSocket; one at the limit gets its logs', async () => {
    const client = await connect(`${gateway.url.replace('http', 'ws')}/devnet/ws/v3/${gateway.key}`)
    try {
      const many = Array.from({ length: 1001 }, (_, at) => addressAt(at))
      const refused = await client.call('eth_subscribe', ['logs', { address: many }])
      assert.deepEqual(refused.error, {
        code: -32602,
        message: 'invalid argument 1: too many addresses, the limit is 1000',
      })
      const atLimit = [...many.slice(0, 999), node.fixtures.demo.toUpperCase().replace('0X', '0x')]
      const { result: id } = await client.call('eth_subscribe', ['logs', { address: atLimit }])
      assert.match(String(id), /^0x[0-9a-f]{32}$/)
      const blockHash = await mineIncrement(node)
      await until(
        () => client.messages.some((message) => message.params?.subscription === id),
        'the Demo contract log',
      )
      const log = client.messages.find((message) => message.params?.subscription === id)?.params?.result as {
        blockHash: string
      }
      assert.equal(log.blockHash, blockHash)
    } finally {
      client.socket.close()
    }
  })
})
