// npm run bench:ws — WebSocket requests through tollgate against anvil's own WebSocket (same calls,
// same connections, one run), then tollgate's memory with 10,000 live subscriptions
// (1,000 connections x 10). Bounded: BENCH_SECONDS (default 4) per measurement.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { children, cpuTicks, rssMiB, startTollgate } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ws-'))
const open: WebSocket[] = []
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const tollgate = await startTollgate(
    dir,
    'tollgate',
    { url: anvil.url, ws: anvil.wsUrl },
    // every request relayed to anvil (the cache would answer these repeated reads itself)
    { gas: { enabled: false }, cache: { enabled: false } },
  )
  const gatewayWs = `${tollgate.origin.replace('http', 'ws')}/ws/v3/${tollgate.key}`

  const rows: string[] = []
  for (const [name, params] of [
    ['eth_blockNumber', []],
    ['eth_getTransactionReceipt', [fixtures.eip1559Tx]],
  ] as const) {
    for (const connections of [1, 16, 64]) {
      const node = await load(anvil.wsUrl, name, params, connections)
      const cpuBefore = cpuTicks(tollgate.pid)
      const gate = await load(gatewayWs, name, params, connections)
      const cpuAfter = cpuTicks(tollgate.pid) ?? 0
      const cpuMicros = Math.round(((cpuAfter - (cpuBefore ?? 0)) * 10_000) / gate.total)
      const row = `| ${name} | ${connections} | ${fmt(node.rps)} | ${fmt(gate.rps)} | ${Math.round((gate.rps / node.rps) * 100)}% | ${cpuMicros} |`
      rows.push(row)
      process.stdout.write(`${row}\n`)
    }
  }

  // 10,000 live subscriptions: 1,000 connections with 10 each (newHeads and logs filters)
  const rssBefore = rssMiB(tollgate.pid)
  for (let index = 0; index < 1_000; index++) {
    const socket = new WebSocket(gatewayWs)
    open.push(socket)
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    for (let sub = 0; sub < 10; sub++) {
      const params = sub % 2 === 0 ? ['newHeads'] : ['logs', { address: fixtures.demo, topics: [null] }]
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: sub, method: 'eth_subscribe', params }))
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  await fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
  })
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  const rssAfter = rssMiB(tollgate.pid)
  const memory = `tollgate RSS: ${rssBefore.toFixed(0)} MiB before, ${rssAfter.toFixed(0)} MiB with 10,000 live subscriptions on 1,000 connections (target ≤ 200 MB)`

  const table = [
    '| call | conns | anvil WS req/s | tollgate WS req/s | tollgate/anvil | tollgate CPU µs/call |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
  process.stdout.write(`\n${table}\n\n${memory}\n`)
} finally {
  for (const socket of open) socket.terminate()
  for (const child of children) child.kill('SIGTERM')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** `connections` sockets, each sending the next request as soon as the last is answered. */
async function load(url: string, method: string, params: readonly unknown[], connections: number) {
  const sockets = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(url)
          socket.once('open', () => resolve(socket))
          socket.once('error', reject)
        }),
    ),
  )
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  let total = 0
  let running = true
  for (const socket of sockets) {
    socket.on('message', () => {
      total++
      if (running) socket.send(body)
    })
    socket.send(body)
  }
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1_000))
  running = false
  const elapsed = (performance.now() - started) / 1_000
  for (const socket of sockets) socket.terminate()
  return { rps: total / elapsed, total }
}

function fmt(rps: number): string {
  return Math.round(rps).toLocaleString('en-US')
}
