// npm run bench: the same calls, in one run on loopback, three ways: the node directly, the minimal
// pass-through proxy (bench/lib/passThroughProxy.ts), and tollgate. Forwarded calls go through a tollgate
// with its cache off (every call reaches the node); cached reads through one with its cache on (the
// default), warmed by one call. Bounded: BENCH_SECONDS (default 4) per measurement, after
// BENCH_WARMUP_SECONDS (default 2) of the same load on each target, unmeasured (and, before the
// first row, that long of each call on each target: a fresh process compiles its hot code over
// seconds of load); 5 forwarded and
// 3 cached calls (BENCH_CALLS=name;... for fewer) x BENCH_CONNECTIONS (default 1,16,64) x 4 targets.
// A second copy of the pass-through is measured alongside as a control: the same code, so its ratio to
// the first is this machine's noise. A process keeps its own speed for its life (on a shared VM,
// identical processes differ by up to a quarter), so the gateways and proxies are started afresh
// BENCH_INSTANCES times (default 1) and every row sums all of them.
// `npm run bench -- --record` also writes the tables into bench/RESULTS.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { mineBigBlock } from './lib/mineBigBlock.ts'
import { cpuTicks, startPassThrough, startTollgate, stopChildren } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number)
const onlyCalls = process.env.BENCH_CALLS?.split(';')
const instances = Number(process.env.BENCH_INSTANCES ?? 1)
const record = process.argv.includes('--record')

type Target = { name: 'node' | 'pass-through' | 'control' | 'tollgate'; url: string; pid: number | undefined }
type Call = { name: string; method: string; params: unknown[] }
type Measurement = { rps: number; mean: number; p99: number; failures: number; cpuMicros: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 20 })
  const bigBlock = await mineBigBlock(anvil.url, fixtures.accounts.slice(0, 8), 250)

  // the big block, and the blocks read below, at or below the finalized block (anvil: head - 64)
  await post(anvil.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x50'] }))
  const node: Target = { name: 'node', url: anvil.url, pid: anvil.process.pid }

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
  const selected = (list: Call[]) => list.filter((call) => !onlyCalls || onlyCalls.includes(call.name))
  const forwardedRows = rowsOf(selected(calls))
  const cachedRows = rowsOf(selected(cachedCalls))
  for (let instance = 0; instance < instances; instance++) {
    const forwarding = await startTollgate(
      dir,
      `forwarding${instance}`,
      { url: anvil.url },
      { cache: { enabled: false } },
    )
    const caching = await startTollgate(dir, `caching${instance}`, { url: anvil.url })
    const passThrough: Target = {
      name: 'pass-through',
      ...(await startPassThrough(anvil.url, forwarding.key)),
    }
    const copy: Target = { name: 'control', ...(await startPassThrough(anvil.url, forwarding.key)) }
    const set = instances > 1 ? `set ${instance + 1}/${instances}: ` : ''
    await measureRows(
      forwardedRows,
      [node, passThrough, copy, { name: 'tollgate', url: forwarding.url, pid: forwarding.pid }],
      set,
    )
    await measureRows(
      cachedRows,
      [node, passThrough, copy, { name: 'tollgate', url: caching.url, pid: caching.pid }],
      set,
    )
    await stopChildren()
  }

  const header =
    '| call | conns | node req/s | pass-through req/s | tollgate req/s | tollgate/node | tollgate/pass-through | control/pass-through | node mean/p99 ms | pass-through mean/p99 ms | tollgate mean/p99 ms | pass-through CPU µs/call | tollgate CPU µs/call | control CPU µs/call |\n' +
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
  const tables = [
    `Every row sums ${instances} set${instances === 1 ? '' : 's'} of fresh gateway and proxy processes; the control is a second copy of the pass-through.`,
    '',
    '**Forwarded calls** (tollgate with its cache off: every call reaches the node)',
    '',
    header,
    ...lines(forwardedRows),
    // BENCH_CALLS may leave no cached read
    ...(cachedRows.calls.length === 0
      ? []
      : [
          '',
          '**Cached immutable reads** (tollgate with its cache on, after one warming call; the pass-through forwards every call)',
          '',
          header,
          ...lines(cachedRows),
        ]),
  ].join('\n')
  process.stdout.write(`\n${tables}\n`)
  if (record) recordResults(tables)
} finally {
  // waited for: a process still writing (a callgrind dump, its database) would race the directory's removal
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** One row per call and connection count, with every turn of every target over every set of processes. */
type Rows = { calls: Call[]; turns: Map<Target['name'], Measurement[]>[] }

function rowsOf(calls: Call[]): Rows {
  return { calls, turns: calls.flatMap(() => connectionsList.map(() => new Map())) }
}

function lines({ calls, turns }: Rows): string[] {
  return calls.flatMap((call, c) =>
    connectionsList.map((connections, k) =>
      row(
        call.name,
        connections,
        turns[c * connectionsList.length + k] as Map<Target['name'], Measurement[]>,
      ),
    ),
  )
}

/** Every row of `rows` on one set of targets, each target measured in turn. */
async function measureRows(rows: Rows, targets: Target[], set: string): Promise<void> {
  const { calls } = rows
  // a fresh process is still compiling its hot code for seconds under load (V8 compiles on a
  // background thread, which this saturated machine starves): each target serves every call first
  if (warmupSeconds > 0) {
    for (const call of calls) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
      for (const target of targets) await measure(target, body, 16, warmupSeconds)
    }
  }
  for (const [c, call] of calls.entries()) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    const answers = await Promise.all(targets.map((target) => post(target.url, body)))
    if (new Set(answers).size !== 1 || answers[0]?.includes('"error"')) {
      throw new Error(`${call.name}: the targets answer differently or with an error`)
    }
    for (const [k, connections] of connectionsList.entries()) {
      // each target warmed with this row's call first, unmeasured: V8 optimises a process's code for
      // the calls it sees, and re-optimises (seconds, for tollgate's larger code) when they change
      for (const target of targets)
        if (warmupSeconds > 0) await measure(target, body, connections, warmupSeconds)
      // each target twice, in mirrored order (A B C C B A), half the time each: a node that slows or
      // speeds up during a row does not favour whoever is measured first
      const turns = rows.turns[c * connectionsList.length + k] as Map<Target['name'], Measurement[]>
      const own = new Map<Target['name'], Measurement[]>()
      for (const target of [...targets, ...[...targets].reverse()]) {
        const half = await measure(target, body, connections, seconds / 2)
        turns.set(target.name, [...(turns.get(target.name) ?? []), half])
        own.set(target.name, [...(own.get(target.name) ?? []), half])
      }
      process.stdout.write(`${set}${row(call.name, connections, own)}\n`)
    }
  }
}

/** A table row from every turn of the four targets. */
function row(call: string, connections: number, turns: Map<Target['name'], Measurement[]>): string {
  const [node, pass, control, gate] = (['node', 'pass-through', 'control', 'tollgate'] as const).map((name) =>
    combine(turns.get(name) ?? []),
  ) as [Measurement, Measurement, Measurement, Measurement]
  const failures = node.failures + pass.failures + control.failures + gate.failures
  return (
    `| ${call} | ${connections} | ${fmt(node.rps)} | ${fmt(pass.rps)} | ${fmt(gate.rps)} | ` +
    `${pct(gate.rps / node.rps)} | ${pct(gate.rps / pass.rps)} | ${pct(control.rps / pass.rps)} | ` +
    `${node.mean.toFixed(2)} / ${node.p99} | ${pass.mean.toFixed(2)} / ${pass.p99} | ` +
    `${gate.mean.toFixed(2)} / ${gate.p99} | ` +
    `${pass.cpuMicros ?? '-'} | ${gate.cpuMicros ?? '-'} | ${control.cpuMicros ?? '-'} |` +
    (failures > 0 ? ` (${failures} failed requests)` : '')
  )
}

function toHex(value: bigint): string {
  return `0x${value.toString(16)}`
}

/** Turns of one target as one: mean throughput and latency, the worst p99, CPU per call weighted by rate. */
function combine(turns: Measurement[]): Measurement {
  const rps = turns.reduce((sum, turn) => sum + turn.rps, 0)
  const cpu = turns.every((turn) => turn.cpuMicros !== undefined)
  return {
    rps: rps / turns.length,
    mean: turns.reduce((sum, turn) => sum + turn.mean, 0) / turns.length,
    p99: Math.max(...turns.map((turn) => turn.p99)),
    failures: turns.reduce((sum, turn) => sum + turn.failures, 0),
    cpuMicros: cpu
      ? Math.round(turns.reduce((sum, turn) => sum + (turn.cpuMicros as number) * turn.rps, 0) / rps)
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
  const stamp = `Recorded ${new Date().toISOString()} with \`BENCH_SECONDS=${seconds} BENCH_WARMUP_SECONDS=${warmupSeconds} BENCH_INSTANCES=${instances} npm run bench -- --record\`, node ${process.version}.`
  writeFileSync(
    file,
    `${text.slice(0, start)}<!-- latest:start -->\n${stamp}\n\n${table}\n${text.slice(end)}`,
  )
}
