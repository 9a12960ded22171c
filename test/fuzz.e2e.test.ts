import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** A small seeded PRNG: the same seed gives the same hostile inputs, so a failure can be replayed. */
function createRandom(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T
  return { next, pick }
}

const methods = [
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_call',
  'eth_getLogs',
  'eth_getProof',
  'eth_getStorageAt',
  'eth_getBlockReceipts',
  'eth_feeHistory',
  'eth_subscribe',
  'eth_sendRawTransaction',
  'debug_traceCall',
  'nope',
  '',
]

/** Values of every JSON type, and the shapes that break parsers: deep nesting, huge numbers, odd hex. */
function hostileValue(random: ReturnType<typeof createRandom>, depth = 0): unknown {
  const kind = random.pick(['hex', 'number', 'string', 'bool', 'null', 'array', 'object', 'deep', 'huge'])
  switch (kind) {
    case 'hex':
      return random.pick([
        '0x',
        '0x0',
        '0x00',
        '0xzz',
        `0x${'f'.repeat(65)}`,
        `0x${'1'.repeat(40)}`,
        `0x${'ab'.repeat(32)}`,
        '0X1',
      ])
    case 'number':
      return random.pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, -0])
    case 'string':
      return random.pick([
        'latest',
        'pending',
        'finalized',
        'safe',
        'earliest',
        'LATEST',
        '',
        '\u0000',
        '💥',
        '12',
      ])
    case 'bool':
      return random.next() < 0.5
    case 'null':
      return null
    case 'array':
      return depth > 3
        ? []
        : Array.from({ length: Math.floor(random.next() * 4) }, () => hostileValue(random, depth + 1))
    case 'object':
      return depth > 3
        ? {}
        : Object.fromEntries(
            Array.from({ length: Math.floor(random.next() * 4) }, () => [
              random.pick([
                'to',
                'from',
                'data',
                'gas',
                'address',
                'topics',
                'fromBlock',
                'blockHash',
                '__proto__',
                'x',
              ]),
              hostileValue(random, depth + 1),
            ]),
          )
    case 'deep': {
      let value: unknown = 1
      for (let level = 0; level < 2_000; level++) value = [value]
      return value
    }
    default:
      return '9'.repeat(400)
  }
}

function hostileBody(random: ReturnType<typeof createRandom>): string {
  const call = () => ({
    jsonrpc: random.pick(['2.0', '2.0', '2.0', '1.0', 2, undefined]),
    id: random.pick([1, 'x', null, undefined, {}, [], 1.5]),
    method: random.pick(methods),
    params:
      random.next() < 0.8
        ? Array.from({ length: Math.floor(random.next() * 5) }, () => hostileValue(random))
        : hostileValue(random),
  })
  const shape = random.next()
  if (shape < 0.6) return JSON.stringify(call())
  if (shape < 0.8) return JSON.stringify(Array.from({ length: 1 + Math.floor(random.next() * 6) }, call))
  if (shape < 0.9) return JSON.stringify(call()).slice(0, Math.floor(random.next() * 40))
  return random.pick([
    '[',
    '{}',
    '[[[]]]',
    '"x"',
    'null',
    '1e999',
    '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]',
    '['.repeat(50_000),
  ])
}

describe('hostile input', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({
      config: {
        networks: devnetOver(node),
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('600 random bodies over HTTP: each gets a JSON answer with a sane status, and the gateway keeps serving', async () => {
    const random = createRandom(20261122)
    for (let index = 0; index < 600; index++) {
      const body = hostileBody(random)
      const response = await postJson(gateway.endpoint, body)
      assert.ok(
        [200, 402, 403, 413, 429, 503, 504].includes(response.status),
        `${response.status} for ${body.slice(0, 200)}`,
      )
      if (response.text !== '')
        assert.ok(
          response.json !== undefined,
          `not JSON for ${body.slice(0, 200)}: ${response.text.slice(0, 200)}`,
        )
      const answers = (Array.isArray(response.json) ? response.json : [response.json]) as {
        error?: { code: number }
      }[]
      for (const answer of answers) {
        if (answer?.error)
          assert.notEqual(answer.error.code, -32603, `internal error for ${body.slice(0, 200)}`)
      }
    }
    const healthy = await postJson(gateway.endpoint, rpcBody('eth_chainId'))
    assert.deepEqual(healthy.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
  })

  it('200 random frames over WebSocket: answers, no crash, the connection stays usable', async () => {
    const random = createRandom(7)
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    const answers: string[] = []
    socket.on('message', (data) => answers.push(data.toString()))
    await new Promise((resolve) => socket.once('open', resolve))
    for (let index = 0; index < 200; index++) socket.send(hostileBody(random))
    socket.send(JSON.stringify(rpcBody('eth_chainId', [], 'last')))
    const deadline = Date.now() + 20_000
    while (!answers.some((answer) => answer.includes('"id":"last"'))) {
      assert.ok(Date.now() < deadline, 'the connection answered the last call')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    for (const answer of answers) {
      const parsed = JSON.parse(answer)
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
        if (item?.error) assert.notEqual(item.error.code, -32603, `internal error: ${answer.slice(0, 200)}`)
      }
    }
    socket.close()
  })
})
