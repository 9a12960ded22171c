import assert from 'node:assert/strict'
import { connect as connectTcp } from 'node:net'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

type Answer = { id?: number; result?: unknown; error?: { code: number; message: string } }

/** A raw WebSocket client recording every answer; `localAddress` picks the loopback address it comes from. */
function openSocket(url: string, localAddress = '127.0.0.1') {
  const socket = new WebSocket(url, { localAddress })
  const answers = new Map<number, Answer>()
  const waiters = new Map<number, (answer: Answer) => void>()
  socket.on('message', (data) => {
    const parsed = JSON.parse(data.toString()) as Answer | Answer[]
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (message.id === undefined) continue
      answers.set(message.id, message)
      waiters.get(message.id)?.(message)
    }
  })
  socket.on('error', () => undefined)
  const opened = new Promise<boolean>((resolve) => {
    socket.once('open', () => resolve(true))
    socket.once('close', () => resolve(false))
  })
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
  const answerTo = (id: number) =>
    answers.get(id) ?? new Promise<Answer>((resolve) => waiters.set(id, resolve))
  return { socket, opened, closed, answers, answerTo }
}

describe('connection limits', () => {
  let node: TestNode
  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
  })
  after(async () => {
    await node?.stop()
  })

  describe('the headers timeout', () => {
    let gateway: TestGateway
    before(async () => {
      gateway = await startTestGateway({
        upstreams: [node.url],
        // every client here comes from 127.0.0.1: the per-address cap is not what this test is about
        config: { server: { headersTimeoutMs: 1_000, maxConnectionsPerAddress: 2_000 } },
      })
    })
    after(async () => {
      await gateway?.close()
    })

    it('closes 1,000 slowloris connections with 408, while a normal client is answered 200 throughout', async () => {
      const { port } = gateway.app
      let closed = 0
      const received: string[] = []
      const attackers = Array.from({ length: 1_000 }, (_, index) => {
        const socket = connectTcp({ host: '127.0.0.1', port })
        let data = ''
        // a request line and the start of a header, then nothing more
        socket.once('connect', () =>
          socket.write(`POST /v3/${gateway.key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty`),
        )
        socket.on('data', (chunk) => {
          data += chunk.toString()
        })
        socket.on('error', () => undefined)
        socket.once('close', () => {
          received[index] = data
          closed++
        })
        return socket
      })

      const statuses: number[] = []
      // bounded: if the timeout never fired the test would end here, not hang
      const giveUpAt = Date.now() + 30_000
      try {
        do {
          const answer = await postJson(gateway.endpoint, rpcBody('eth_blockNumber'))
          statuses.push(answer.status)
        } while (closed < attackers.length && Date.now() < giveUpAt)
      } finally {
        for (const socket of attackers) if (!socket.destroyed) socket.destroy()
      }
      assert.equal(closed, attackers.length, 'every slowloris connection was closed by the gateway')
      assert.ok(statuses.length > 0)
      assert.deepEqual(
        statuses.filter((status) => status !== 200),
        [],
        'every normal request answered 200',
      )
      assert.equal(received.length, attackers.length)
      const timedOut = received.filter((data) => data.startsWith('HTTP/1.1 408 Request Timeout')).length
      assert.equal(timedOut, attackers.length, 'each slowloris connection was answered 408 and closed')
    })
  })

  describe('per-address connections, WebSocket calls in flight, upstream timeouts', () => {
    let fake: FakeUpstream
    let gateway: TestGateway
    before(async () => {
      fake = await startFakeUpstream({ kind: 'proxy', target: node.url })
      gateway = await startTestGateway({
        upstreams: [fake.url],
        config: {
          server: { maxConnectionsPerAddress: 4, headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 },
          websocket: { maxInFlightRequests: 4 },
          // hung calls end in 504 after 2.5 s; the breaker stays closed so the proxy answers after
          upstreams: {
            timeoutMs: 2_500,
            attemptTimeoutMs: 2_500,
            maxAttempts: 1,
            breaker: { failures: 1_000 },
          },
          cache: { enabled: false },
        },
      })
    })
    after(async () => {
      await gateway?.close()
      await fake?.close()
    })
    const wsUrl = () => `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`

    it('one address gets at most maxConnectionsPerAddress connections; others are still served', async () => {
      const held = Array.from({ length: 4 }, () => openSocket(wsUrl(), '127.0.0.2'))
      assert.deepEqual(await Promise.all(held.map((each) => each.opened)), [true, true, true, true])
      const extra = openSocket(wsUrl(), '127.0.0.2')
      assert.equal(await extra.opened, false, 'the fifth connection from 127.0.0.2 is closed unanswered')
      assert.equal(await extra.closed, 1006)

      const other = await postJson(gateway.endpoint, rpcBody('eth_chainId'))
      assert.deepEqual(other.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' }, '127.0.0.1 is served')

      const [first] = held as [ReturnType<typeof openSocket>]
      first.socket.close()
      await first.closed
      // the gateway counts the connection gone when its side closes, a moment after the client's
      let again = openSocket(wsUrl(), '127.0.0.2')
      await until(
        () => {
          if (again.socket.readyState === WebSocket.CLOSED) again = openSocket(wsUrl(), '127.0.0.2')
          return again.socket.readyState === WebSocket.OPEN
        },
        'a freed slot for 127.0.0.2',
        10_000,
      )
      for (const each of [...held, again]) each.socket.close()
    })

    it('past maxInFlightRequests a message is answered -32005 at once; hung calls still end with their own answer', async () => {
      const client = openSocket(wsUrl())
      assert.equal(await client.opened, true)
      // the node hangs on these calls while it answers its health checks (every second)
      fake.behave({
        kind: 'forMethods',
        methods: ['eth_getBalance'],
        behaviour: { kind: 'hang' },
        otherwise: node.url,
      })
      const hungHttp = postJson(
        gateway.endpoint,
        rpcBody('eth_getBalance', [node.fixtures.accounts[0], 'latest']),
      )
      try {
        for (let id = 1; id <= 5; id++) {
          const address = node.fixtures.accounts[id % node.fixtures.accounts.length]
          client.socket.send(JSON.stringify(rpcBody('eth_getBalance', [address, 'latest'], id)))
        }
        client.socket.send(JSON.stringify([rpcBody('eth_chainId', [], 6), rpcBody('eth_chainId', [], 7)]))
        const refused = await client.answerTo(5)
        assert.deepEqual(refused.error, {
          code: -32005,
          message: 'too many requests in flight on this connection: at most 4',
        })
        const batch = await Promise.all([client.answerTo(6), client.answerTo(7)])
        assert.deepEqual(
          batch.map((answer) => answer.error?.code),
          [-32005, -32005],
          'a batch over the limit: each call refused',
        )
        assert.deepEqual(
          [1, 2, 3, 4].filter((id) => client.answers.has(id)),
          [],
          'the first four are still in flight',
        )
        // the fake decides to hang when a request reaches it: hold the hang until all five have
        const balances = () => fake.requests.filter((request) => request.method === 'eth_getBalance').length
        await until(() => balances() >= 5, 'the hung calls at the upstream', 10_000)
      } finally {
        fake.behave({ kind: 'proxy', target: node.url })
      }

      // the hung calls end at upstreams.timeoutMs with the gateway's 504, on the socket and over HTTP:
      // the 1 s request timeout covers receiving a request, not the wait for its answer. The node
      // answered its health checks meanwhile: slow calls of their own nature (docs/plans.md)
      const timedOut = {
        code: -32603,
        message: 'upstream request timed out: the node was still working on the call',
      }
      const hung = await Promise.all([1, 2, 3, 4].map((id) => client.answerTo(id)))
      assert.deepEqual(
        hung.map((answer) => answer.error),
        Array(4).fill(timedOut),
      )
      const http = await hungHttp
      assert.equal(http.status, 504)
      assert.deepEqual((http.json as Answer).error, timedOut)

      client.socket.send(JSON.stringify(rpcBody('eth_chainId', [], 8)))
      assert.equal((await client.answerTo(8)).result, '0x7a69', 'slots freed: calls run again')
      client.socket.close()
    })
  })
})
