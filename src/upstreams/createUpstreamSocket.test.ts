import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { WebSocketServer } from 'ws'
import { until } from '../../test/helpers/until.ts'
import { UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import { createUpstreamSocket } from './createUpstreamSocket.ts'

type Call = { id: number; method: string; params: unknown[] }

/**
 * A WebSocket node on loopback (the test fake upstream speaks HTTP only): `answer` returns a result,
 * or undefined never to answer, as a hung node does.
 */
async function startNode(answer: (call: Call) => unknown) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise((resolve) => server.once('listening', resolve))
  const calls: Call[] = []
  const waiting: { method: string; resolve: () => void }[] = []
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const call = JSON.parse(data.toString()) as Call
      calls.push(call)
      for (const waiter of waiting.filter((each) => each.method === call.method)) waiter.resolve()
      const result = answer(call)
      if (result !== undefined) socket.send(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }))
    })
  })
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    /** Resolves once a call of `method` has arrived. */
    called: (method: string) =>
      calls.some((call) => call.method === method)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ method, resolve })),
    /** Sends a subscription notification to every connected client. */
    notify(subscription: string, result: unknown) {
      const message = JSON.stringify({
        jsonrpc: '2.0',
        method: 'eth_subscription',
        params: { subscription, result },
      })
      for (const client of server.clients) client.send(message)
    },
    /** The connections the node holds now. */
    clients: () => [...server.clients],
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate()
        server.close(() => resolve())
      }),
  }
}

describe('createUpstreamSocket', () => {
  const closers: (() => Promise<void> | void)[] = []
  after(async () => {
    for (const close of closers.reverse()) await close()
  })

  it('a node that does not answer is left for the next URL, where the subscription is made again', async () => {
    const hung = await startNode(() => undefined)
    const healthy = await startNode((call) => (call.method === 'eth_subscribe' ? '0xabc' : '0x1'))
    closers.push(hung.close, healthy.close)
    const socket = createUpstreamSocket({
      urls: [hung.url, healthy.url],
      requestTimeoutMs: 100,
      reconnectMs: 10,
    })
    closers.push(() => socket.close())
    const notified = new Promise<unknown>((resolve) => {
      socket.subscribe(['newHeads'], resolve)
    })

    await hung.called('eth_subscribe')
    await healthy.called('eth_subscribe')
    // answered after the subscription's own answer: the subscription is in place by then
    assert.equal(await socket.request('eth_blockNumber', []), '0x1')
    healthy.notify('0xabc', { number: '0x1' })
    assert.deepEqual(await notified, { number: '0x1' })
    assert.deepEqual(
      hung.calls.map((call) => call.method),
      ['eth_subscribe'],
    )
  })

  it('request() on a node that does not answer rejects with UpstreamTimeoutError', async () => {
    const hung = await startNode((call) => (call.method === 'eth_subscribe' ? '0xabc' : undefined))
    closers.push(hung.close)
    const socket = createUpstreamSocket({ urls: [hung.url], requestTimeoutMs: 50, reconnectMs: 10 })
    closers.push(() => socket.close())
    // the socket sends its subscription as soon as it is open: once the node has it, requests can be sent
    socket.subscribe(['newHeads'], () => undefined)
    await hung.called('eth_subscribe')
    await assert.rejects(socket.request('eth_blockNumber', []), UpstreamTimeoutError)
  })

  it('close() ends the requests still waiting at once (no timer left to hold the process)', async () => {
    const hung = await startNode((call) => (call.method === 'eth_subscribe' ? '0xabc' : undefined))
    closers.push(hung.close)
    const socket = createUpstreamSocket({ urls: [hung.url], requestTimeoutMs: 60_000 })
    socket.subscribe(['newHeads'], () => undefined)
    await hung.called('eth_subscribe')
    const waiting = socket.request('eth_blockNumber', [])
    await hung.called('eth_blockNumber')
    let ended: unknown
    waiting.catch((err: unknown) => {
      ended = err
    })
    socket.close()
    // microtasks only: ended by close() itself, not by the close handshake (I/O, which cannot run here)
    for (let turn = 0; turn < 10; turn++) await Promise.resolve()
    assert.match(String(ended), /upstream socket closed/)
  })

  it('connected() tells whether the socket is up: false while the node is gone, true once it is back', async () => {
    const node = await startNode((call) => (call.method === 'eth_subscribe' ? '0xabc' : '0x1'))
    closers.push(node.close)
    // the first reconnect waits 500 ms: long enough to see the socket down
    const socket = createUpstreamSocket({ urls: [node.url], reconnectMs: 500 })
    closers.push(() => socket.close())
    assert.equal(socket.connected(), false)
    socket.subscribe(['newHeads'], () => undefined)
    await node.called('eth_subscribe')
    assert.equal(socket.connected(), true)
    for (const client of node.clients()) client.terminate()
    await until(() => !socket.connected(), 'the socket to see the node go')
    await until(() => socket.connected(), 'the socket to connect again')
  })
})
