// npm run bench:workers: `tollgate start --workers 2` against one process, on cached reads.
// One anvil (seeded); per round, a tollgate with server.workers 1 and one with 2 (each its own SQLite
// file, the cache on, an unlimited key made by the CLI), started one after the other and measured in
// mirrored order (1 2 2 1 ...), BENCH_ROUNDS (default 2) rounds of BENCH_SECONDS (default 8) each at
// BENCH_CONNECTIONS (default 64) connections: eth_getBlockByHash of a seeded block, answered from the
// cache after one warming call. Throughput (req/s) and CPU per call of all the gateway's processes.
// BENCH_LOADER=wrk drives the load with wrk (one thread) instead of autocannon.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import autocannon from 'autocannon'
import { stringify } from 'yaml'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cpuTicks, createUnlimitedKey } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
/** The load generator: autocannon (in this process), or `wrk` (C, one thread: less of the 2 cores). */
const loader = process.env.BENCH_LOADER === 'wrk' ? 'wrk' : 'autocannon'
// this checkout's sources through the TypeScript loader (by its path), so no build is needed first
const tollgate = [
  '--import',
  new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href,
  resolve('src/main.ts'),
]

type Gateway = { child: ChildProcess; url: string; pids(): number[] }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-workers-'))
const running: ChildProcess[] = []
try {
  await seedDevnet(anvil.url, { loadBlocks: 5 })
  const block = (await rpc(anvil.url, 'eth_getBlockByNumber', ['0x2', false])) as { hash: string }
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_getBlockByHash',
    params: [block.hash, false],
  })
  const results = new Map<number, { rps: number; cpuMicros: number }[]>([
    [1, []],
    [2, []],
  ])
  for (let round = 0; round < rounds; round++) {
    for (const workers of round % 2 === 0 ? [1, 2] : [2, 1]) {
      const gateway = await start(workers, `r${round}w${workers}`)
      await rpc(gateway.url, 'eth_getBlockByHash', [block.hash, false])
      const measured = await measure(gateway, body)
      results.get(workers)?.push(measured)
      process.stdout.write(
        `round ${round + 1}, ${workers} worker(s): ${Math.round(measured.rps)} req/s, ${measured.cpuMicros} µs CPU/call\n`,
      )
      await stop(gateway)
    }
  }
  const perRound = (results.get(1) ?? []).map((each, index) => (results.get(2)?.[index]?.rps ?? 0) / each.rps)
  const mean = (values: number[]) => values.reduce((total, each) => total + each, 0) / values.length
  const one = mean((results.get(1) ?? []).map((each) => each.rps))
  const two = mean((results.get(2) ?? []).map((each) => each.rps))
  process.stdout.write(
    `\n| workers | req/s (mean of ${rounds}) | CPU µs/call |\n|---|---|---|\n` +
      `| 1 | ${Math.round(one)} | ${Math.round(mean((results.get(1) ?? []).map((each) => each.cpuMicros)))} |\n` +
      `| 2 | ${Math.round(two)} | ${Math.round(mean((results.get(2) ?? []).map((each) => each.cpuMicros)))} |\n\n` +
      `--workers 2 / one process: ${(two / one).toFixed(2)}x (means); per round (the two measured back to back): ${perRound
        .map((ratio) => `${ratio.toFixed(2)}x`)
        .join(', ')}, median ${median(perRound).toFixed(2)}x\n`,
  )
} finally {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

async function start(workers: number, name: string): Promise<Gateway> {
  const configFile = join(dir, `${name}.yaml`)
  writeFileSync(
    configFile,
    stringify({
      server: { port: 0, workers },
      storage: { sqlite: join(dir, `${name}.db`) },
      networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: anvil.url }] }],
      gas: { enabled: false },
      log: { level: 'warn' },
    }),
  )
  const key = createUnlimitedKey(configFile)
  const child = spawn(process.execPath, [...tollgate, 'start', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  running.push(child)
  const origin = await new Promise<string>((done, fail) => {
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (\S+)/.exec(output)
      if (match?.[1]) {
        child.stdout?.removeAllListeners('data')
        child.stdout?.resume()
        done(match[1])
      }
    })
    child.once('exit', (code) => fail(new Error(`tollgate exited with ${code}: ${output}`)))
  })
  const pids = () => {
    const pid = child.pid ?? 0
    let workerPids: number[] = []
    try {
      workerPids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map(Number)
    } catch {
      // no workers: one process
    }
    return [pid, ...workerPids.filter((each) => each > 0)]
  }
  return { child, url: `${origin}/v3/${key}`, pids }
}

async function stop(gateway: Gateway): Promise<void> {
  const exited = new Promise((done) => gateway.child.once('exit', done))
  gateway.child.kill('SIGTERM')
  await exited
}

async function measure(gateway: Gateway, body: string): Promise<{ rps: number; cpuMicros: number }> {
  const ticks = () => gateway.pids().reduce((total, pid) => total + (cpuTicks(pid) ?? 0), 0)
  const before = ticks()
  if (loader === 'wrk') {
    const output = execFileSync(
      'wrk',
      ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', 'bench/lib/wrkPost.lua', gateway.url],
      { encoding: 'utf8', env: { ...process.env, WRK_BODY: body } },
    )
    const after = ticks()
    if (/Non-2xx|Socket errors/.test(output)) throw new Error(`failed requests\n${output}`)
    const calls = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0)
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0)
    return { rps, cpuMicros: Math.round(((after - before) * 10_000) / Math.max(1, calls)) }
  }
  const result = await autocannon({
    url: gateway.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
  })
  const after = ticks()
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  const calls = result.requests.total
  return { rps: result.requests.average, cpuMicros: Math.round(((after - before) * 10_000) / calls) }
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const answer = (await response.json()) as { result?: unknown; error?: unknown }
  if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
  return answer.result
}
