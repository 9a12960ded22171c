// npm run bench:hedge: hedging against a slow upstream. Two upstreams in front of one anvil, each a
// small proxy (node:http in, undici out) that counts the calls it forwards; the first also delays
// BENCH_SLOW_SHARE (default 5%) of them by BENCH_SLOW_MS (default 1000 ms), chosen by a seeded
// generator. Two tollgates (cache off) in front of both, one with upstreams.hedge on (the default)
// and one with it off, are measured in one run: BENCH_REQUESTS (default 2000) eth_getBalance calls
// each from BENCH_CONCURRENCY (default 16) clients, after 200 warming calls, alternating halves
// (on off off on). Prints client latency percentiles and the upstream calls per client call.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { createRandom } from '../test/helpers/createRandom.ts'
import { children, startTollgate } from './lib/processes.ts'

const requests = Number(process.env.BENCH_REQUESTS ?? 2000)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16)
const slowShare = Number(process.env.BENCH_SLOW_SHARE ?? 0.05)
const slowMs = Number(process.env.BENCH_SLOW_MS ?? 1000)
const method = 'eth_getBalance'

type Counts = { calls: number; delayed: number; abandoned: number }

/** A proxy to `target` counting the bench's calls; `slow()` says whether to hold this one for slowMs first. */
async function startProxy(target: string, slow: () => boolean) {
  const upstream = new Pool(target, { connections: 256 })
  const counts: Counts = { calls: 0, delayed: 0, abandoned: 0 }
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks)
      // only the bench's calls are counted and delayed: head polls and the like pass through
      const counted = body.includes(method)
      if (counted) counts.calls++
      if (counted && slow()) {
        counts.delayed++
        await new Promise((resolve) => setTimeout(resolve, slowMs))
        // the gateway gave up on it (a hedge answered first) and aborted the request
        if (response.destroyed || request.socket.destroyed) {
          counts.abandoned++
          return
        }
      }
      try {
        const answer = await upstream.request({
          path: '/',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const text = Buffer.from(await answer.body.arrayBuffer())
        response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text)
      } catch {
        if (!response.destroyed) response.writeHead(502).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    reset: () => Object.assign(counts, { calls: 0, delayed: 0, abandoned: 0 }),
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await upstream.close()
    },
  }
}

/** `count` calls from `concurrency` clients at once; each call's latency, ms. */
async function load(url: string, count: number): Promise<number[]> {
  const { origin, pathname } = new URL(url)
  const client = new Pool(origin, { connections: concurrency })
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: ['0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 'latest'],
  })
  const latencies: number[] = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const started = performance.now()
      const answer = await client.request({
        path: pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      const text = await answer.body.text()
      if (answer.statusCode !== 200 || !text.includes('"result"')) {
        throw new Error(`unexpected answer ${answer.statusCode}: ${text}`)
      }
      latencies.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  await client.close()
  return latencies
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
}

const anvil = await startAnvil()
const random = createRandom(20261122)
const slow = await startProxy(anvil.url, () => random.chance(slowShare))
const fast = await startProxy(anvil.url, () => false)
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-hedge-'))
try {
  const network = (hedge: boolean) => ({
    cache: { enabled: false },
    upstreams: { hedge: { enabled: hedge } },
    networks: [
      {
        name: 'devnet',
        chainId: 31337,
        upstreams: [
          { url: slow.url, name: 'slow' },
          { url: fast.url, name: 'fast' },
        ],
      },
    ],
  })
  const gates = {
    on: await startTollgate(dir, 'on', { url: slow.url }, network(true)),
    off: await startTollgate(dir, 'off', { url: slow.url }, network(false)),
  }
  const results = {
    on: { latencies: [] as number[], slow: 0, fast: 0, delayed: 0, abandoned: 0 },
    off: { latencies: [] as number[], slow: 0, fast: 0, delayed: 0, abandoned: 0 },
  }
  const elapsedMs = { on: 0, off: 0 }
  for (const name of ['on', 'off', 'off', 'on'] as const) {
    const url = gates[name].url
    await load(url, 200)
    // let delayed warming calls finish before counting
    await new Promise((resolve) => setTimeout(resolve, slowMs + 100))
    slow.reset()
    fast.reset()
    const started = performance.now()
    const latencies = await load(url, requests / 2)
    elapsedMs[name] += performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, slowMs + 100))
    const result = results[name]
    result.latencies.push(...latencies)
    result.slow += slow.counts.calls
    result.fast += fast.counts.calls
    result.delayed += slow.counts.delayed
    result.abandoned += slow.counts.abandoned
  }
  const lines = [
    `${requests} ${method} calls per mode, ${concurrency} at once; the first upstream delays ${slowShare * 100}% of calls by ${slowMs} ms`,
    '',
    '| hedging | req/s | p50 ms | p90 ms | p99 ms | max ms | mean ms | calls to slow / fast upstream | delayed (abandoned) | upstream calls per client call |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const name of ['on', 'off'] as const) {
    const result = results[name]
    const sorted = [...result.latencies].sort((a, b) => a - b)
    const mean = sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length
    const perCall = (result.slow + result.fast) / sorted.length
    const ms = (value: number) => value.toFixed(1)
    lines.push(
      `| ${name} | ${Math.round(sorted.length / (elapsedMs[name] / 1000))} | ${ms(percentile(sorted, 0.5))} | ${ms(percentile(sorted, 0.9))} | ${ms(percentile(sorted, 0.99))} | ${ms(sorted.at(-1) ?? 0)} | ${ms(mean)} | ${result.slow} / ${result.fast} | ${result.delayed} (${result.abandoned}) | ${perCall.toFixed(3)} |`,
    )
  }
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  for (const child of children) child.kill('SIGTERM')
  await slow.close()
  await fast.close()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
