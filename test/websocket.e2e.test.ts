import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Contract, Network, WebSocketProvider } from 'ethers'
import { createPublicClient, http, type PublicClient, webSocket } from 'viem'
import { foundry } from 'viem/chains'
import WebSocket from 'ws'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, mineIncrement, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'
import { untilAnnounced } from './helpers/untilAnnounced.ts'

/** Demo.increment() from an unlocked dev account: one block with one Incremented log, mined before this resolves. */
async function increment(node: TestNode): Promise<void> {
  await mineIncrement(node)
}

/** The node's head: with automine, the block of the transaction just sent. */
async function blockNumberOf(node: TestNode): Promise<number> {
  return Number(((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result)
}

function wsUrl(gateway: TestGateway, key = gateway.key): string {
  return `${gateway.url.replace('http', 'ws')}/ws/v3/${key}`
}

/**
 * WebSocket messages the gateway is done with, on every network (/metrics' request durations: each
 * counted once its answer is handed to the socket, or it is refused, or dropped with the socket).
 */
async function wsMessagesDone(gateway: TestGateway): Promise<number> {
  return (await readMetrics(gateway.url)).sum('tollgate_request_duration_seconds_count', { transport: 'ws' })
}

/** A raw client that records every message. */
async function connect(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers })
  const messages: {
    id?: number
    result?: unknown
    error?: unknown
    params?: { subscription: string; result: unknown }
  }[] = []
  const waiters: (() => void)[] = []
  socket.on('message', (data) => {
    messages.push(JSON.parse(data.toString()))
    for (const wake of waiters.splice(0)) wake()
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  let nextId = 1
  const call = async (method: string, params: unknown[] = []) => {
    const id = nextId++
    socket.send(JSON.stringify(rpcBody(method, params, id)))
    for (;;) {
      const answer = messages.find((message) => message.id === id)
      if (answer) return answer
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  const notifications = (subscription: string) =>
    messages
      .filter((message) => message.params?.subscription === subscription)
      .map((message) => message.params?.result)
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  )
  return { socket, messages, call, notifications, closed }
}

describe('WebSocket: clients', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
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

  it('viem: requests, watchBlocks and watchContractEvent', async () => {
    const client = createPublicClient({
      chain: foundry,
      transport: webSocket(wsUrl(gateway)),
    }) as PublicClient
    try {
      const start = await client.getBlockNumber()
      const counter = {
        address: node.fixtures.demo,
        abi: demoAbi,
        functionName: 'counter',
        blockNumber: start,
      } as const
      const viaNode = createPublicClient({ chain: foundry, transport: http(node.url, { retryCount: 0 }) })
      assert.equal(await client.readContract(counter), await viaNode.readContract(counter))
      const blocks: bigint[] = []
      const events: bigint[] = []
      const stopBlocks = client.watchBlocks({ onBlock: (block) => blocks.push(block.number) })
      const stopEvents = client.watchContractEvent({
        address: node.fixtures.demo,
        abi: demoAbi,
        eventName: 'Incremented',
        onLogs: (logs) => events.push(...logs.map((log) => log.args.value as bigint)),
      })
      // viem subscribes in the background: increments until both watchers have one (its log's value is
      // the counter after it); from that block on, every block and event must come, once
      const { blockNumber: _, ...counterNow } = counter
      const warm = await untilAnnounced(
        async () => {
          await increment(node)
          return { block: BigInt(await blockNumberOf(node)), value: await viaNode.readContract(counterNow) }
        },
        ({ block, value }) => blocks.includes(block) && events.includes(value),
      )
      for (let index = 0; index < 3; index++) await increment(node)
      const after = <T extends bigint>(list: T[], than: bigint) => list.filter((item) => item > than)
      await until(() => after(blocks, warm.block).length >= 3 && after(events, warm.value).length >= 3)
      // viem fetches each announced block, so its callbacks may come out of order: compare the sets
      assert.deepEqual(
        after(blocks, warm.block).sort((a, b) => Number(a - b)),
        [warm.block + 1n, warm.block + 2n, warm.block + 3n],
      )
      assert.deepEqual(after(events, warm.value), [warm.value + 1n, warm.value + 2n, warm.value + 3n])
      stopBlocks()
      stopEvents()
    } finally {
      await (client.transport as unknown as { getRpcClient(): Promise<{ close(): void }> })
        .getRpcClient()
        .then((rpc) => rpc.close())
    }
  })

  it('ethers: requests, on("block") and contract events', async () => {
    const provider = new WebSocketProvider(wsUrl(gateway), Network.from(31337), { staticNetwork: true })
    try {
      const start = await provider.getBlockNumber()
      const blocks: number[] = []
      const events: bigint[] = []
      await provider.on('block', (number: number) => blocks.push(number))
      const contract = new Contract(node.fixtures.demo, demoAbi, provider)
      await contract.on('Incremented', (_by: string, value: bigint) => events.push(value))
      // ethers subscribes in the background: increments until both listeners have one (its log's value
      // is the counter after it); from that block on, every block and event must come, once, in order
      const warm = await untilAnnounced(
        async () => {
          await increment(node)
          return {
            block: await blockNumberOf(node),
            value: (await contract.getFunction('counter')()) as bigint,
          }
        },
        ({ block, value }) => blocks.includes(block) && events.includes(value),
      )
      assert.ok(warm.block > start)
      for (let index = 0; index < 2; index++) await increment(node)
      await until(() => blocks.includes(warm.block + 2) && events.includes(warm.value + 2n))
      assert.deepEqual(
        blocks.filter((number) => number > warm.block),
        [warm.block + 1, warm.block + 2],
      )
      assert.deepEqual(
        events.filter((value) => value > warm.value),
        [warm.value + 1n, warm.value + 2n],
      )
    } finally {
      await provider.destroy()
    }
  })

  it('refuses the upgrade with the HTTP status of docs/compatibility.md §1', async () => {
    const status = (url: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(url, { headers })
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
        socket.on('open', () => {
          socket.close()
          resolve(101)
        })
        socket.on('error', () => undefined)
      })
    assert.equal(await status(`${gateway.url.replace('http', 'ws')}/ws/v3/`), 401)
    assert.equal(await status(wsUrl(gateway, 'f'.repeat(32))), 401)
    const { key } = await gateway.app.keyAdmin.create({ plan: 'team', secret: true })
    await gateway.app.keyAdmin.addAllowlistEntries(key.key, 'origins', ['app.example.com'])
    await gateway.app.keys.refresh()
    assert.equal(await status(wsUrl(gateway, key.key), { origin: 'https://evil.example' }), 403)
    assert.equal(await status(wsUrl(gateway, key.key), { origin: 'https://app.example.com' }), 101)
    assert.equal(await status(`${gateway.url.replace('http', 'ws')}/nowhere`), 404)
  })

  it('eth_subscribe ids, eth_unsubscribe, bad kinds, the subscription limit, batches and errors', async () => {
    const client = await connect(wsUrl(gateway))
    const subscribed = await client.call('eth_subscribe', ['newHeads'])
    assert.match(subscribed.result as string, /^0x[0-9a-f]{32}$/)
    assert.deepEqual((await client.call('eth_unsubscribe', [subscribed.result])).result, true)
    assert.deepEqual((await client.call('eth_unsubscribe', [subscribed.result])).result, false)
    assert.equal(((await client.call('eth_subscribe', ['syncing'])).error as { code: number }).code, -32602)
    assert.equal(
      ((await client.call('eth_getBlockByNumber', ['0x01', false])).error as { code: number }).code,
      -32602,
    )
    assert.equal((await client.call('eth_chainId')).result, '0x7a69')
    client.socket.send(JSON.stringify([rpcBody('eth_chainId', [], 90), rpcBody('eth_nope', [], 91)]))
    await until(() => client.messages.some((message) => Array.isArray(message)))
    client.socket.close()

    const limited = await startTestGateway({
      config: {
        networks: devnetOver(node),
        websocket: { maxSubscriptions: 2 },
      },
    })
    try {
      const second = await connect(wsUrl(limited))
      await second.call('eth_subscribe', ['newHeads'])
      await second.call('eth_subscribe', ['logs', { address: node.fixtures.demo }])
      assert.deepEqual((await second.call('eth_subscribe', ['newHeads'])).error, {
        code: -32005,
        message: 'subscription limit reached: at most 2 per connection',
      })
      second.socket.close()
    } finally {
      await limited.close()
    }
  })

  it('a batch with large answers arrives whole, as one message, as over HTTP', async () => {
    // code returning 512 KiB of zeros: each call answers a 1 MiB hex string, to a contract of its own
    const bigCall = (id: number) => {
      const contract = `0x${(0x2000 + id).toString(16).padStart(40, '0')}`
      return rpcBody(
        'eth_call',
        [{ to: contract }, 'latest', { [contract]: { code: '0x620800006000f3' } }],
        id,
      )
    }
    const batch = JSON.stringify([bigCall(1), rpcBody('eth_chainId', [], 2), bigCall(3)])
    const overHttp = await postJson(`${gateway.url}/v3/${gateway.key}`, batch)
    assert.equal(overHttp.status, 200)
    assert.ok(overHttp.text.length > 2 * 1024 * 1024)
    const socket = new WebSocket(wsUrl(gateway))
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    try {
      const message = new Promise<string>((resolve) =>
        socket.once('message', (data) => resolve(data.toString())),
      )
      socket.send(batch)
      assert.equal(await message, overHttp.text)
    } finally {
      socket.close()
    }
  })

  it('charges 5 per subscribe, 50 per head, 300 per block with matching logs; closes 1008 when the balance runs out', async () => {
    const { key } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: 1_000,
      creditsPerSecond: 100_000,
    })
    await gateway.app.keys.refresh()
    // first, proof that the gateway's head feed announces each new block (a probe on another key sees
    // an empty block announced); its subscription keeps the feed running through the test
    const probe = await connect(wsUrl(gateway))
    const probeHeads = (await probe.call('eth_subscribe', ['newHeads'])).result as string
    await untilAnnounced(
      async () => {
        await postJson(node.url, rpcBody('evm_mine'))
        return blockNumberOf(node)
      },
      (block) =>
        probe.notifications(probeHeads).some((head) => Number((head as { number: string }).number) === block),
    )
    const client = await connect(wsUrl(gateway, key.key))
    // answered: the subscriptions are live, and every block mined from now on is announced to them
    const heads = (await client.call('eth_subscribe', ['newHeads'])).result as string
    const logs = (
      await client.call('eth_subscribe', ['logs', { address: node.fixtures.demo, topics: [null] }])
    ).result as string
    await increment(node)
    await until(() => client.notifications(heads).length === 1 && client.notifications(logs).length === 1)
    // 5 + 5 + 50 + 300
    const remaining = gateway.app.meter.remainingCredits(
      gateway.app.keys.findActiveKey(key.key)?.subject as never,
    )
    assert.equal(remaining, 1_000 - 360)
    await increment(node)
    await until(() => client.notifications(heads).length === 2 && client.notifications(logs).length === 2)
    assert.equal(
      gateway.app.meter.remainingCredits(gateway.app.keys.findActiveKey(key.key)?.subject as never),
      1_000 - 710,
    )
    // 290 left: the next head (50) is paid, its logs (300) are not: the socket closes
    await increment(node)
    const closed = await client.closed
    assert.equal(closed.code, 1008)
    assert.match(closed.reason, /daily credit limit/)
    assert.equal(client.notifications(heads).length, 3)
    assert.equal(client.notifications(logs).length, 2)
    probe.socket.close()
  })

  it('newPendingTransactions, the secret on the upgrade, and frames over the limit', async () => {
    const { key, secret } = await gateway.app.keyAdmin.create({ plan: 'team', secret: true })
    await gateway.app.keyAdmin.setSecurity(key.key, { requireSecret: true })
    await gateway.app.keys.refresh()
    assert.ok(secret)
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(wsUrl(gateway, key.key))
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.on('error', () => undefined)
    })
    assert.equal(refused, 401)
    const client = await connect(wsUrl(gateway, key.key), {
      authorization: `Basic ${Buffer.from(`:${secret}`).toString('base64')}`,
    })
    const pending = (await client.call('eth_subscribe', ['newPendingTransactions'])).result as string
    await postJson(node.url, rpcBody('evm_setAutomine', [false]))
    try {
      const send = async () =>
        (
          (
            await postJson(
              node.url,
              rpcBody('eth_sendTransaction', [
                { from: node.fixtures.accounts[4], to: node.fixtures.accounts[5], value: '0x1' },
              ]),
            )
          ).json as { result: string }
        ).result
      // the first listener starts the gateway's upstream newPendingTransactions subscription: once one
      // transaction is announced it is live, and the next one sent must be announced
      await untilAnnounced(send, (hash) => client.notifications(pending).includes(hash))
      const hash = await send()
      await until(() => client.notifications(pending).includes(hash))
    } finally {
      await postJson(node.url, rpcBody('evm_setAutomine', [true]))
      await postJson(node.url, rpcBody('evm_mine'))
    }
    const tooBig = JSON.stringify(rpcBody('web3_sha3', [`0x${'00'.repeat(3 * 1024 * 1024)}`]))
    client.socket.send(tooBig)
    assert.equal((await client.closed).code, 1009)
  })

  it('a client that does not answer pings is dropped', async () => {
    const pinging = await startTestGateway({
      config: {
        networks: devnetOver(node),
        websocket: { pingMs: 400 },
      },
    })
    try {
      const silent = new WebSocket(wsUrl(pinging), { autoPong: false })
      const answering = new WebSocket(wsUrl(pinging))
      await Promise.all(
        [silent, answering].map((socket) => new Promise((resolve) => socket.once('open', resolve))),
      )
      await new Promise((resolve) => silent.once('close', resolve))
      assert.equal(answering.readyState, WebSocket.OPEN, 'a client that answers stays')
      answering.close()
    } finally {
      await pinging.close()
    }
  })

  it('a reader that cannot keep up is closed, not buffered without limit', async () => {
    const small = await startTestGateway({
      config: {
        networks: devnetOver(node),
        // each answer fits the buffer (a larger one would be refused as too large): many do not
        websocket: { maxBufferedBytes: 1024 * 1024 },
      },
    })
    try {
      // eth_feeHistory over 1024 blocks at 100 percentiles: over 600 KB an answer
      await postJson(node.url, rpcBody('anvil_mine', ['0x400']))
      const percentiles = Array.from({ length: 100 }, (_, index) => index)
      const client = new WebSocket(wsUrl(small))
      await new Promise((resolve) => client.once('open', resolve))
      const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)))
      const socket = (client as unknown as { _socket: { pause(): void; resume(): void } })._socket
      socket.pause()
      for (let index = 0; index < 60; index++) {
        client.send(JSON.stringify(rpcBody('eth_feeHistory', ['0x400', 'latest', percentiles], index)))
      }
      // the gateway is done with all 60 messages: each answer it could hold for this client (its share
      // of the answers held until sent, 32 MiB: the last few are refused as server busy, and cost
      // nothing) was handed to the socket, tens of MB that cannot all sit in loopback's socket
      // buffers, so sending them has met the 1 MiB limit. (Credits held are no sign: they are held as
      // each message is admitted, and a refused one's are given back when it is answered.)
      await until(
        async () => (await wsMessagesDone(small)) === 60,
        'the gateway to be done with the 60 messages',
      )
      let code: number | undefined
      void closed.then((value) => {
        code = value
      })
      socket.resume()
      await until(() => code !== undefined, 'the gateway to close the socket')
      assert.equal(code, 1008)
    } finally {
      await small.close()
    }
  })
})
