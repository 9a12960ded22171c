// npm run bench: the same calls, in one run on loopback, three ways: the node directly, the minimal
// pass-through proxy (bench/passThroughProxy.ts), and tollgate. Forwarded calls go through a tollgate
// with its cache off (every call reaches the node); cached reads through one with its cache on (the
// default), warmed by one call. Bounded: BENCH_SECONDS (default 4) per measurement, after
// BENCH_WARMUP_SECONDS (default 2) of the same load on each target, unmeasured (and, before the
// first row, that long of each call on each target: a fresh process compiles its hot code over
// seconds of load); 5 forwarded and
// 3 cached calls (BENCH_CALLS=name,... for fewer) x BENCH_CONNECTIONS (default 1,16,64) x 3 targets.
// `npm run bench -- --record` also writes the tables into bench/RESULTS.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './cheapCalls.ts'
import { mineBigBlock } from './mineBigBlock.ts'
import { cpuTicks, spawnAndWait, startTollgate, stopChildren } from './processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number)
const onlyCalls = process.env.BENCH_CALLS?.split(';')
const record = process.argv.includes('--record')

type Target = { name: 'node' | 'pass-through' | 'tollgate'; url: string; pid: number | undefined }
type Call = { name: string; method: string; params: unknown[] }
type Measurement = { rps: number; mean: number; p99: number; failures: number; cpuMicros: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 20 })
  const bigBlock = await mineBigBlock(anvil.url, fixtures.accounts.slice(0, 8), 250)

  // the big block, and the blocks read below, at or below the finalized block (anvil: head - 64)
  await post(anvil.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x50'] }))
  const forwarding = await startTollgate(dir, 'forwarding', { url: anvil.url }, { cache: { enabled: false } })
  const caching = await startTollgate(dir, 'caching', { url: anvil.url })
  const proxy = await spawnAndWait(
    ['--import', 'tsx', 'bench/passThroughProxy.ts', anvil.url, '0', forwarding.key],
    /listening (\d+)/,
  )
  const node: Target = { name: 'node', url: anvil.url, pid: anvil.process.pid }
  const passThrough: Target = {
    name: 'pass-through',
    url: `http://127.0.0.1:${proxy.match}/v3/${forwarding.key}`,
    pid: proxy.child.pid,
  }
  const targets: Target[] = [
    node,
    passThrough,
    { name: 'tollgate', url: forwarding.url, pid: forwarding.pid },
  ]
  const cachedTargets: Target[] = [
    node,
    passThrough,
    { name: 'tollgate', url: caching.url, pid: caching.pid },
  ]

  const calls: Call[] = [
    ...cheapCalls(fixtures),
    {
      name: 'eth_getProof',
      method: 'eth_getProof',
      params: [fixtures.demo, [`0x${'0'.repeat(64)}`], 'latest'],
    },
    {
      name: 'eth_getBlockByNumber (250 txs, full)',
      method: 'eth_getBlockByNumber',
      params: [`0x${bigBlock.toString(16)}`, true],
    },
  ]

  const selected = (list: Call[]) => list.filter((call) => !onlyCalls || onlyCalls.includes(call.name))
  const rows = await measureRows(selected(calls), targets)

  const bigBlockHash = (
    JSON.parse(
      await post(
        anvil.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getBlockByNumber',
          params: [toHex(bigBlock), false],
        }),
      ),
    ) as { result: { hash: string } }
  ).result.hash
  const cachedCalls: Call[] = [
    {
      name: 'eth_call (finalized block)',
      method: 'eth_call',
      params: [
        { to: fixtures.demo, data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }) },
        toHex(bigBlock),
      ],
    },
    { name: 'eth_getBlockByHash (250 txs)', method: 'eth_getBlockByHash', params: [bigBlockHash, false] },
    {
      name: 'eth_getBlockByNumber (250 txs, full, finalized)',
      method: 'eth_getBlockByNumber',
      params: [toHex(bigBlock), true],
    },
  ]
  const cachedRows = await measureRows(selected(cachedCalls), cachedTargets)

  const header =
    '| call | conns | node req/s | pass-through req/s | tollgate req/s | tollgate/node | tollgate/pass-through | node mean/p99 ms | pass-through mean/p99 ms | tollgate mean/p99 ms | pass-through CPU µs/call | tollgate CPU µs/call |\n' +
    '|---|---|---|---|---|---|---|---|---|---|---|---|'
  const tables = [
    '**Forwarded calls** (tollgate with its cache off: every call reaches the node)',
    '',
    header,
    ...rows,
    '',
    '**Cached immutable reads** (tollgate with its cache on, after one warming call; the pass-through forwards every call)',
    '',
    header,
    ...cachedRows,
  ].join('\n')
  process.stdout.write(`\n${tables}\n`)
  if (record) recordResults(tables)
} finally {
  // waited for: a process still writing (a callgrind dump, its database) would race the directory's removal
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** One row per call and connection count: every target measured in turn. */
async function measureRows(calls: Call[], targets: Target[]): Promise<string[]> {
  const rows: string[] = []
  // a fresh process is still compiling its hot code for seconds under load (V8 compiles on a
  // background thread, which this saturated machine starves): each target serves every call first
  if (warmupSeconds > 0) {
    for (const call of calls) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
      for (const target of targets) await measure(target, body, 16, warmupSeconds)
    }
  }
  for (const call of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    const answers = await Promise.all(targets.map((target) => post(target.url, body)))
    if (new Set(answers).size !== 1 || answers[0]?.includes('"error"')) {
      throw new Error(`${call.name}: the targets answer differently or with an error`)
    }
    for (const connections of connectionsList) {
      // each target warmed with this row's call first, unmeasured: V8 optimises a process's code for
      // the calls it sees, and re-optimises (seconds, for tollgate's larger code) when they change
      for (const target of targets)
        if (warmupSeconds > 0) await measure(target, body, connections, warmupSeconds)
      // each target twice, in mirrored order (A B C C B A), half the time each: a node that slows or
      // speeds up during a row does not favour whoever is measured first
      const halves = new Map<Target['name'], Measurement[]>()
      for (const target of [...targets, ...[...targets].reverse()]) {
        const half = await measure(target, body, connections, seconds / 2)
        halves.set(target.name, [...(halves.get(target.name) ?? []), half])
      }
      const results = new Map<Target['name'], Measurement>()
      for (const [name, [first, second]] of halves)
        results.set(name, combine(first as Measurement, second as Measurement))
      const [node, pass, gate] = [
        results.get('node'),
        results.get('pass-through'),
        results.get('tollgate'),
      ] as [Measurement, Measurement, Measurement]
      const row =
        `| ${call.name} | ${connections} | ${fmt(node.rps)} | ${fmt(pass.rps)} | ${fmt(gate.rps)} | ` +
        `${pct(gate.rps / node.rps)} | ${pct(gate.rps / pass.rps)} | ` +
        `${node.mean.toFixed(2)} / ${node.p99} | ${pass.mean.toFixed(2)} / ${pass.p99} | ` +
        `${gate.mean.toFixed(2)} / ${gate.p99} | ` +
        `${pass.cpuMicros ?? '-'} | ${gate.cpuMicros ?? '-'} |`
      rows.push(row)
      process.stdout.write(`${row}\n`)
      const failures = node.failures + pass.failures + gate.failures
      if (failures > 0) process.stdout.write(`  (${failures} failed requests in this row)\n`)
    }
  }
  return rows
}

function toHex(value: bigint): string {
  return `0x${value.toString(16)}`
}

function combine(a: Measurement, b: Measurement): Measurement {
  const cpu = a.cpuMicros !== undefined && b.cpuMicros !== undefined
  return {
    rps: (a.rps + b.rps) / 2,
    mean: (a.mean + b.mean) / 2,
    p99: Math.max(a.p99, b.p99),
    failures: a.failures + b.failures,
    cpuMicros: cpu
      ? Math.round(((a.cpuMicros as number) * a.rps + (b.cpuMicros as number) * b.rps) / (a.rps + b.rps))
      : undefined,
  }
}

async function measure(
  target: Target,
  body: string,
  connections: number,
  duration: number,
): Promise<Measurement> {
  const cpuBefore = cpuTicks(target.pid)
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration,
  })
  const cpuAfter = cpuTicks(target.pid)
  const served = result.requests.total
  const cpuMicros =
    target.name === 'node' || cpuBefore === undefined || cpuAfter === undefined || served === 0
      ? undefined
      : Math.round(((cpuAfter - cpuBefore) * 10_000) / served)
  return {
    rps: result.requests.average,
    mean: result.latency.mean,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
    cpuMicros,
  }
}

async function post(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return response.text()
}

function fmt(rps: number): string {
  return Math.round(rps).toLocaleString('en-US')
}

function pct(ratio: number): string {
  return `${Math.round(ratio * 100)}%`
}

function recordResults(table: string): void {
  const file = 'bench/RESULTS.md'
  const text = readFileSync(file, 'utf8')
  const start = text.indexOf('<!-- latest:start -->')
  const end = text.indexOf('<!-- latest:end -->')
  if (start === -1 || end === -1) throw new Error(`${file} has no latest:start / latest:end markers`)
  const stamp = `Recorded ${new Date().toISOString()} with \`BENCH_SECONDS=${seconds} BENCH_WARMUP_SECONDS=${warmupSeconds} npm run bench -- --record\`, node ${process.version}.`
  writeFileSync(
    file,
    `${text.slice(0, start)}<!-- latest:start -->\n${stamp}\n\n${table}\n${text.slice(end)}`,
  )
}
