// npm run bench:tracing: what OpenTelemetry tracing at 100% sampling costs a forwarded call, and what
// the route header costs. Three tollgates (cache off) in front of one anvil: tracing off; tracing on
// (always_on, OTLP http/protobuf to a sink in this process that takes every export and answers 200);
// tracing off with the route header on for the key. Each is measured with autocannon on each cheap
// call (or those BENCH_METHODS names, `;`-separated) for BENCH_SECONDS (default 5) at
// BENCH_CONNECTIONS (default 16), in BENCH_TURNS (default 2) alternating turns: req/s, the
// gateway's CPU per call against tracing off, and the OTLP bytes the traced gateway sent per call.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { combine, fmt, type Measurement, measure } from './lib/measureLoad.ts'
import { startTollgate, stopChildren } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const turns = Number(process.env.BENCH_TURNS ?? 2)
const onlyMethods = process.env.BENCH_METHODS?.split(';')

/** An OTLP/HTTP trace endpoint that takes everything: exports and their bytes counted. */
async function startSink() {
  const received = { exports: 0, bytes: 0 }
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      received.bytes += chunk.length
    })
    req.on('end', () => {
      received.exports++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, received, close: () => server.close() }
}

const anvil = await startAnvil()
const sink = await startSink()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-tracing-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const base = { cache: { enabled: false }, log: { level: 'warn' } }
  const off = await startTollgate(dir, 'off', { url: anvil.url }, base)
  const traced = await startTollgate(
    dir,
    'traced',
    { url: anvil.url },
    { ...base, tracing: { enabled: true, endpoint: sink.url, protocol: 'http/protobuf', sampleRatio: 1 } },
  )
  const routed = await startTollgate(dir, 'routed', { url: anvil.url }, base)
  execFileSync(process.execPath, [
    'bin/tollgate.js',
    'keys',
    'security',
    routed.key,
    '--route-header',
    'on',
    '--config',
    join(dir, 'routed.yaml'),
  ])
  const targets = [
    { name: 'tracing off', url: off.url, pid: off.pid },
    { name: 'tracing on, 100% sampled', url: traced.url, pid: traced.pid },
    { name: 'route header on', url: routed.url, pid: routed.pid },
  ]
  let tracedCalls = 0
  const count = (target: { pid: number | undefined }, measured: Measurement) => {
    if (target.pid === traced.pid) tracedCalls += measured.requests
  }
  const calls = cheapCalls(fixtures).filter((call) => !onlyMethods || onlyMethods.includes(call.name))
  console.log(`| call | gateway | req/s | CPU µs per call | vs off |`)
  console.log(`|---|---|---|---|---|`)
  for (const call of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    // warm every gateway up before the first turn
    for (const target of targets) count(target, await measure(target, body, connections, 1))
    const results = new Map<string, Measurement[]>(targets.map((target) => [target.name, []]))
    for (let turn = 0; turn < turns; turn++) {
      const order = turn % 2 === 0 ? targets : [...targets].reverse()
      for (const target of order) {
        const measured = await measure(target, body, connections, seconds)
        count(target, measured)
        results.get(target.name)?.push(measured)
      }
    }
    const offCpu = combine(results.get('tracing off') ?? []).cpuMicros
    for (const target of targets) {
      const { rps, cpuMicros } = combine(results.get(target.name) ?? [])
      const ratio = target.name === 'tracing off' ? '1.00' : (cpuMicros / offCpu).toFixed(2)
      console.log(`| ${call.name} | ${target.name} | ${fmt(rps)} | ${fmt(cpuMicros)} | ${ratio}x |`)
    }
  }
  // the traced gateway sends what it still holds when it stops
  await stopChildren()
  const { exports, bytes } = sink.received
  console.log(`\nOTLP: ${exports} exports, ${fmt(bytes / Math.max(1, tracedCalls))} bytes per traced call`)
} finally {
  await stopChildren()
  sink.close()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
