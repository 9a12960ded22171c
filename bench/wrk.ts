// npm run bench:wrk: the forwarded cheap calls of `npm run bench`, measured with a second load
// generator, wrk (C, one thread; POST bodies from bench/lib/wrkPost.lua), against the minimal
// pass-through (bench/lib/passThroughProxy.ts) and tollgate with its cache off, both in front of one
// anvil, in one run. A second copy of the pass-through is measured alongside as a control: it runs
// the same code, so its ratio to the first is this machine's noise, the resolution of the others.
//
// A process keeps its own speed for its life (on a shared VM, identical processes differ by up to a
// quarter), so the three are started afresh BENCH_INSTANCES times (default 3) and every row sums all
// of them. Per set, each row alternates the three in mirrored order (A B C C B A ...), BENCH_HALVES
// (default 2) times, BENCH_SECONDS (default 4) per row and target split across the halves, after
// BENCH_WARMUP_SECONDS (default 2) of the row's load on each, unmeasured (and, before the first
// row, that long of each call on each: a fresh process compiles its hot code over seconds of
// load). Needs `wrk` on the PATH (Debian: apt-get install wrk).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { type BenchCall, cheapCalls } from './lib/cheapCalls.ts'
import { combine, fmt, type Measurement } from './lib/measureLoad.ts'
import { cpuTicks, startPassThrough, startTollgate, stopChildren } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const halves = Number(process.env.BENCH_HALVES ?? 2)
const instances = Number(process.env.BENCH_INSTANCES ?? 3)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '16,64').split(',').map(Number)
// wrk takes whole seconds
if (!Number.isInteger(seconds / halves) || !Number.isInteger(warmupSeconds)) {
  throw new Error(
    'BENCH_SECONDS / BENCH_HALVES and BENCH_WARMUP_SECONDS must be whole seconds (wrk takes no less)',
  )
}

type Target = { name: 'pass-through' | 'control' | 'tollgate'; url: string; pid: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const calls: BenchCall[] = [
    ...cheapCalls(fixtures),
    {
      name: 'eth_getProof',
      method: 'eth_getProof',
      params: [fixtures.demo, [`0x${'0'.repeat(64)}`], 'latest'],
    },
  ]
  const rows = calls.flatMap((call) => connectionsList.map((connections) => ({ call, connections })))
  // every measured turn of a row and target, over every set of processes
  const results = rows.map(() => new Map<Target['name'], Measurement[]>())
  for (let instance = 0; instance < instances; instance++) {
    const targets = await startTargets(`wrk${instance}`)
    // a fresh process is still compiling its hot code for seconds under load: every call first
    if (warmupSeconds > 0) {
      for (const call of calls) for (const target of targets) measure(target, bodyOf(call), 16, warmupSeconds)
    }
    for (const [index, { call, connections }] of rows.entries()) {
      const body = bodyOf(call)
      // warmed with this row's call first, unmeasured (V8 re-optimises for a new call: seconds)
      for (const target of targets) if (warmupSeconds > 0) measure(target, body, connections, warmupSeconds)
      const turns = results[index] as Map<Target['name'], Measurement[]>
      const own = new Map<Target['name'], Measurement[]>()
      for (let half = 0; half < halves; half++) {
        const order = half % 2 === 0 ? targets : [...targets].reverse()
        for (const target of order) {
          const measured = measure(target, body, connections, seconds / halves)
          turns.set(target.name, [...(turns.get(target.name) ?? []), measured])
          own.set(target.name, [...(own.get(target.name) ?? []), measured])
        }
      }
      process.stdout.write(`set ${instance + 1}/${instances}: ${line(call.name, connections, own)}\n`)
    }
    await stopChildren()
  }
  const lines = [
    `Every row sums ${instances} sets of fresh processes; the control is a second copy of the pass-through.`,
    '',
    '| call | conns | pass-through req/s | tollgate req/s | tollgate/pass-through | control/pass-through | pass-through CPU µs/call | tollgate CPU µs/call | CPU ratio | control CPU ratio |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(({ call, connections }, index) =>
      line(call.name, connections, results[index] as Map<Target['name'], Measurement[]>),
    ),
  ]
  process.stdout.write(`\n${lines.join('\n')}\n`)
} finally {
  // waited for: a process still writing (a callgrind dump, its database) would race the directory's removal
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** A fresh set: tollgate (cache off), the pass-through and its copy, all on the one anvil and key. */
async function startTargets(name: string): Promise<Target[]> {
  const gate = await startTollgate(dir, name, { url: anvil.url }, { cache: { enabled: false } })
  const pass = await startPassThrough(anvil.url, gate.key)
  const control = await startPassThrough(anvil.url, gate.key)
  return [
    { name: 'pass-through', ...pass },
    { name: 'control', ...control },
    { name: 'tollgate', url: gate.url, pid: gate.pid },
  ]
}

function bodyOf(call: BenchCall): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
}

/** A table row from every turn of the three targets. */
function line(call: string, connections: number, turns: Map<Target['name'], Measurement[]>): string {
  const [pass, control, gateway] = (['pass-through', 'control', 'tollgate'] as const).map((name) =>
    combine(turns.get(name) ?? []),
  ) as [Measurement, Measurement, Measurement]
  return (
    `| ${call} | ${connections} | ${fmt(pass.rps)} | ${fmt(gateway.rps)} | ` +
    `${(gateway.rps / pass.rps).toFixed(2)} | ${(control.rps / pass.rps).toFixed(2)} | ` +
    `${pass.cpuMicros} | ${gateway.cpuMicros} | ${(gateway.cpuMicros / pass.cpuMicros).toFixed(2)} | ` +
    `${(control.cpuMicros / pass.cpuMicros).toFixed(2)} |`
  )
}

function measure(target: Target, body: string, connections: number, duration: number): Measurement {
  const before = cpuTicks(target.pid) ?? 0
  const output = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${duration}s`, '-s', 'bench/lib/wrkPost.lua', target.url],
    { encoding: 'utf8', env: { ...process.env, WRK_BODY: body } },
  )
  const after = cpuTicks(target.pid) ?? 0
  if (/Non-2xx|Socket errors/.test(output)) throw new Error(`${target.name}: failed requests\n${output}`)
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0)
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0)
  return { rps, requests, cpuMicros: ((after - before) * 10_000) / Math.max(1, requests) }
}
