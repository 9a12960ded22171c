// npm run bench:wrk: the forwarded cheap calls of `npm run bench`, measured with a second load
// generator, wrk (C, one thread; POST bodies from bench/wrkPost.lua), against the minimal
// pass-through (bench/passThroughProxy.ts) and tollgate with its cache off, both in front of one
// anvil, in one run. Each row alternates the two in mirrored order (A B B A ...), BENCH_HALVES
// (default 4) times, BENCH_SECONDS (default 8) per row split across the halves, after
// BENCH_WARMUP_SECONDS (default 2) of the row's load on each, unmeasured (and, before the first
// row, that long of each call on each: a fresh process compiles its hot code over seconds of
// load). Needs `wrk` on the
// PATH (Debian: apt-get install wrk).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { type BenchCall, cheapCalls } from './cheapCalls.ts'
import { combine, fmt, type Measurement } from './measureLoad.ts'
import { cpuTicks, spawnAndWait, startTollgate, stopChildren } from './processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const halves = Number(process.env.BENCH_HALVES ?? 4)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '16,64').split(',').map(Number)

type Target = { name: 'pass-through' | 'tollgate'; url: string; pid: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const gate = await startTollgate(dir, 'wrk', { url: anvil.url }, { cache: { enabled: false } })
  const proxy = await spawnAndWait(
    ['--import', 'tsx', 'bench/passThroughProxy.ts', anvil.url, '0', gate.key],
    /listening (\d+)/,
  )
  const targets: Target[] = [
    { name: 'pass-through', url: `http://127.0.0.1:${proxy.match}/v3/${gate.key}`, pid: proxy.child.pid },
    { name: 'tollgate', url: gate.url, pid: gate.pid },
  ]
  const calls: BenchCall[] = [
    ...cheapCalls(fixtures),
    {
      name: 'eth_getProof',
      method: 'eth_getProof',
      params: [fixtures.demo, [`0x${'0'.repeat(64)}`], 'latest'],
    },
  ]
  const lines = [
    '| call | conns | pass-through req/s | tollgate req/s | tollgate/pass-through | pass-through CPU µs/call | tollgate CPU µs/call | CPU ratio |',
    '|---|---|---|---|---|---|---|---|',
  ]
  // a fresh process is still compiling its hot code for seconds under load: every call first
  if (warmupSeconds > 0) {
    for (const call of calls) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
      for (const target of targets) measure(target, body, 16, warmupSeconds)
    }
  }
  for (const call of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    for (const connections of connectionsList) {
      // warmed with this row's call first, unmeasured (V8 re-optimises for a new call: seconds)
      for (const target of targets) if (warmupSeconds > 0) measure(target, body, connections, warmupSeconds)
      const results = new Map<Target['name'], Measurement[]>()
      for (let half = 0; half < halves; half++) {
        const order = half % 2 === 0 ? targets : [...targets].reverse()
        for (const target of order) {
          const measured = measure(target, body, connections, seconds / halves)
          results.set(target.name, [...(results.get(target.name) ?? []), measured])
        }
      }
      const [pass, gateway] = [
        combine(results.get('pass-through') ?? []),
        combine(results.get('tollgate') ?? []),
      ]
      const line =
        `| ${call.name} | ${connections} | ${fmt(pass.rps)} | ${fmt(gateway.rps)} | ` +
        `${(gateway.rps / pass.rps).toFixed(2)} | ${pass.cpuMicros} | ${gateway.cpuMicros} | ` +
        `${(gateway.cpuMicros / pass.cpuMicros).toFixed(2)} |`
      lines.push(line)
      process.stdout.write(`${line}\n`)
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n`)
} finally {
  // waited for: a process still writing (a callgrind dump, its database) would race the directory's removal
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

function measure(target: Target, body: string, connections: number, duration: number): Measurement {
  const before = cpuTicks(target.pid) ?? 0
  const output = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${duration}s`, '-s', 'bench/wrkPost.lua', target.url],
    { encoding: 'utf8', env: { ...process.env, WRK_BODY: body } },
  )
  const after = cpuTicks(target.pid) ?? 0
  if (/Non-2xx|Socket errors/.test(output)) throw new Error(`${target.name}: failed requests\n${output}`)
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0)
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0)
  return { rps, requests, cpuMicros: ((after - before) * 10_000) / Math.max(1, requests) }
}
