// npm run bench:stall: does one client's big batch stall the others? One tollgate process in front of
// an anvil; one client sends batches of BENCH_CALLS (default 40) calls, one batch at a time, each
// call answering BENCH_ANSWER_MIB (default 8) MiB, and reads every answer to its end (discarding
// it). BENCH_METHOD `block` (the default): eth_getBlockByNumber with full transactions of a block
// mined to answer that much (mineWideBlock; the node answers the batch's identical calls once, and
// the gateway sends that answer 40 times); `call`: eth_calls of a state override's code returning
// zeros, each to a contract of its own (the node makes each answer, none shared or kept).
// Meanwhile another process asks eth_chainId (kept by the cache: the gateway's own answer) and
// /healthz, one request at a time, for BENCH_SECONDS (default 20): their worst and p99 latency.
// BENCH_ENCODING (default none) is the batch client's Accept-Encoding (br, gzip);
// BENCH_MAX_ANSWER_MIB (default 512) raises server.maxAnswerBytes so that the batch is answered
// whole (0 keeps the default, 32 MiB, which answers three calls and -32003 for the rest);
// BENCH_PROFILE=DIR runs the gateway under --cpu-prof into DIR, BENCH_NODE_FLAGS with more flags
// for node; BENCH_BASE (a checkout with dist/ built, or its bin/tollgate.js) runs that build instead.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { mineWideBlock, wideBlockGasLimit } from '../test/helpers/mineWideBlock.ts'
import { cpuTicks, startTollgate, stopChildren } from './lib/processes.ts'

const calls = Number(process.env.BENCH_CALLS ?? 40)
const answerMiB = Number(process.env.BENCH_ANSWER_MIB ?? 8)
const method = process.env.BENCH_METHOD ?? 'block'
const seconds = Number(process.env.BENCH_SECONDS ?? 20)
const encoding = process.env.BENCH_ENCODING ?? ''
const maxAnswerMiB = Number(process.env.BENCH_MAX_ANSWER_MIB ?? 512)
const profileDir = process.env.BENCH_PROFILE
const base = process.env.BENCH_BASE
const bin =
  base === undefined
    ? 'bin/tollgate.js'
    : base.endsWith('.js')
      ? resolve(base)
      : resolve(base, 'bin/tollgate.js')
const mib = 1024 * 1024

/** Code returning `answerMiB / 2` MiB of zeros: its answer is a hex string of `answerMiB` MiB. */
const returnBytes = (answerMiB * mib) / 2
const code = `0x62${returnBytes.toString(16).padStart(6, '0')}6000f3`

/** One batch of eth_calls, each to a contract of its own (`first` onwards). */
function callsBody(first: number): string {
  return JSON.stringify(
    Array.from({ length: calls }, (_, index) => {
      const contract = `0x${(0x10000 + first + index).toString(16).padStart(40, '0')}`
      return {
        jsonrpc: '2.0',
        id: index,
        method: 'eth_call',
        params: [{ to: contract, gas: '0x10000000' }, 'latest', { [contract]: { code } }],
      }
    }),
  )
}

/** Posts `body` and reads the answer to its end without keeping it: its status and size. */
function postDiscarding(url: string, body: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (encoding !== '') headers['accept-encoding'] = encoding
    const req = request(url, { method: 'POST', headers }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The poller, in a process of its own so that reading the batches does not delay its clock. */
const pollerSource = `
const [url, healthz, seconds] = process.argv.slice(1)
const { Agent, request } = require('node:http')
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })
const once = (target, post) => new Promise((resolve, reject) => {
  const started = performance.now()
  const req = request(target, { agent, method: post ? 'POST' : 'GET', headers: { 'content-type': 'application/json' } }, (res) => {
    res.resume()
    res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode }))
  })
  req.on('error', reject)
  req.end(post ? body : undefined)
})
;(async () => {
  const chainId = [], health = [], statuses = {}
  const until = performance.now() + Number(seconds) * 1000
  while (performance.now() < until) {
    const a = await once(url, true)
    chainId.push(a.ms); statuses[a.status] = (statuses[a.status] ?? 0) + 1
    health.push((await once(healthz, false)).ms)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  process.stdout.write(JSON.stringify({ chainId, health, statuses }))
})()
`

function poll(
  url: string,
  healthz: string,
): Promise<{ chainId: number[]; health: number[]; statuses: object }> {
  const child = spawn(process.execPath, ['-e', pollerSource, url, healthz, String(seconds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  return new Promise((resolve, reject) =>
    child.once('close', (exitCode) =>
      exitCode === 0 ? resolve(JSON.parse(output)) : reject(new Error(`poller exited ${exitCode}`)),
    ),
  )
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN
}
const summary = (values: number[]) =>
  `n=${values.length} p50 ${quantile(values, 0.5).toFixed(1)} ms, p99 ${quantile(values, 0.99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`

/** One batch of eth_getBlockByNumber calls for `block`, with full transactions. */
function blocksBody(block: string): string {
  return JSON.stringify(
    Array.from({ length: calls }, (_, id) => ({
      jsonrpc: '2.0',
      id,
      method: 'eth_getBlockByNumber',
      params: [block, true],
    })),
  )
}

const anvil = await startAnvil({ extraArgs: ['--gas-limit', String(wideBlockGasLimit)] })
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-stall-'))
try {
  const server: Record<string, unknown> = { port: 0 }
  if (maxAnswerMiB > 0) {
    server.maxAnswerBytes = maxAnswerMiB * mib
    server.maxAnswerBytesInFlight = 2 * maxAnswerMiB * mib
  }
  const nodeFlags = [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)]
  if (profileDir) nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`)
  const wrapper = nodeFlags.length > 0 ? [process.execPath, ...nodeFlags] : []
  const { origin, url, pid } = await startTollgate(
    dir,
    'tollgate',
    { url: anvil.url },
    { server, gas: { enabled: false } },
    bin,
    wrapper,
  )
  // eth_chainId kept by the cache from here on
  await postDiscarding(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }))
  const block = method === 'block' ? await mineWideBlock(anvil.url, answerMiB * mib) : ''
  const cpuBefore = cpuTicks(pid) ?? 0
  const polled = poll(url, `${origin}/healthz`)
  const until = performance.now() + seconds * 1000
  let batches = 0
  let bytes = 0
  const batchMs: number[] = []
  const statuses = new Set<number>()
  while (performance.now() < until) {
    const started = performance.now()
    const answer = await postDiscarding(
      url,
      method === 'block' ? blocksBody(block) : callsBody(batches * calls),
    )
    batchMs.push(performance.now() - started)
    statuses.add(answer.status)
    bytes += answer.bytes
    batches++
  }
  const cpuSeconds = ((cpuTicks(pid) ?? 0) - cpuBefore) / 100
  const { chainId, health, statuses: chainIdStatuses } = await polled
  console.log(
    `${bin}: batches of ${calls} ${method === 'block' ? 'eth_getBlockByNumber' : 'eth_call'} calls answering ${answerMiB} MiB each, maxAnswerBytes ${maxAnswerMiB > 0 ? `${maxAnswerMiB} MiB` : 'default'}, accept-encoding ${encoding || 'none'}`,
  )
  console.log(
    `${batches} batches (statuses ${[...statuses].join(',')}), ${(bytes / mib).toFixed(0)} MiB read, the gateway's CPU ${cpuSeconds.toFixed(1)} s, a batch ${summary(batchMs)}`,
  )
  console.log(`eth_chainId (${JSON.stringify(chainIdStatuses)}): ${summary(chainId)}`)
  console.log(`/healthz: ${summary(health)}`)
} finally {
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
