// npm run bench:compression: what compressing answers costs and saves, in one run on loopback.
// 1. A full block (250 transactions) from tollgate's cache (so the node is out of the picture), asked
//    for without Accept-Encoding, with gzip and with br: requests/s, bytes on the wire, tollgate CPU
//    per answer. 2. Cheap forwarded calls (cache off) from a client that sends `Accept-Encoding: gzip,
//    deflate, br` and from one that sends none: small answers are never compressed, so the two should
//    match. Each pair or triple is measured in mirrored order (A B C C B A), BENCH_SECONDS (default 4)
//    each, at BENCH_CONNECTIONS (default 16).
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { mineBigBlock } from './lib/mineBigBlock.ts'
import { children, cpuTicks, startTollgate } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)

type Variant = { name: string; acceptEncoding: string | undefined }
type Measurement = { rps: number; cpuMicros: number; failures: number }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 2 })
  const bigBlock = await mineBigBlock(anvil.url, fixtures.accounts.slice(0, 8), 250)
  // the big block at or below the finalized block (anvil: head - 64), so tollgate keeps it
  await rawPost(anvil.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x50'] }))
  const caching = await startTollgate(dir, 'caching', { url: anvil.url })
  const forwarding = await startTollgate(dir, 'forwarding', { url: anvil.url }, { cache: { enabled: false } })

  const blockBody = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_getBlockByNumber',
    params: [`0x${bigBlock.toString(16)}`, true],
  })
  const encodings: Variant[] = [
    { name: 'none', acceptEncoding: undefined },
    { name: 'gzip', acceptEncoding: 'gzip' },
    { name: 'br', acceptEncoding: 'gzip, deflate, br' },
  ]
  const lines = [
    `**Compressed answers**: a full block of 250 transactions from tollgate's cache, ${connections} connections`,
    '',
    '| Accept-Encoding | Content-Encoding | bytes per answer | req/s | tollgate CPU µs/answer |',
    '|---|---|---|---|---|',
  ]
  const blockResults = await mirrored(encodings, (variant) => measure(caching, blockBody, variant))
  for (const variant of encodings) {
    const { bytes, encoding } = await wireSize(caching.url, blockBody, variant.acceptEncoding)
    const result = blockResults.get(variant.name) as Measurement
    lines.push(
      `| ${variant.acceptEncoding ?? '(none)'} | ${encoding ?? '(none)'} | ${bytes.toLocaleString('en-US')} | ${fmt(result.rps)} | ${result.cpuMicros} |`,
    )
  }

  const calls = cheapCalls(fixtures).slice(0, 2)
  const clients: Variant[] = [
    { name: 'none', acceptEncoding: undefined },
    { name: 'asks', acceptEncoding: 'gzip, deflate, br' },
  ]
  lines.push(
    '',
    `**Cheap forwarded calls** (cache off), ${connections} connections: a client that asks for compression and one that does not`,
    '',
    '| call | req/s, no Accept-Encoding | req/s, gzip, deflate, br | ratio | CPU µs/call, none | CPU µs/call, asks |',
    '|---|---|---|---|---|---|',
  )
  for (const call of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    const results = await mirrored(clients, (variant) => measure(forwarding, body, variant))
    const [none, asks] = [results.get('none'), results.get('asks')] as [Measurement, Measurement]
    lines.push(
      `| ${call.name} | ${fmt(none.rps)} | ${fmt(asks.rps)} | ${Math.round((asks.rps / none.rps) * 100)}% | ${none.cpuMicros} | ${asks.cpuMicros} |`,
    )
  }
  process.stdout.write(`\n${lines.join('\n')}\n`)
} finally {
  for (const child of children) child.kill('SIGTERM')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** Each variant twice, in mirrored order, half the time each; the halves averaged. */
async function mirrored(
  variants: Variant[],
  run: (variant: Variant) => Promise<Measurement>,
): Promise<Map<string, Measurement>> {
  const halves = new Map<string, Measurement[]>()
  for (const variant of [...variants, ...[...variants].reverse()]) {
    halves.set(variant.name, [...(halves.get(variant.name) ?? []), await run(variant)])
  }
  const results = new Map<string, Measurement>()
  for (const [name, [a, b]] of halves as Map<string, [Measurement, Measurement]>) {
    results.set(name, {
      rps: (a.rps + b.rps) / 2,
      cpuMicros: Math.round((a.cpuMicros * a.rps + b.cpuMicros * b.rps) / (a.rps + b.rps)),
      failures: a.failures + b.failures,
    })
  }
  return results
}

async function measure(
  target: { url: string; pid: number | undefined },
  body: string,
  variant: Variant,
): Promise<Measurement> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (variant.acceptEncoding !== undefined) headers['accept-encoding'] = variant.acceptEncoding
  const before = cpuTicks(target.pid) ?? 0
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers,
    body,
    connections,
    duration: seconds / 2,
  })
  const after = cpuTicks(target.pid) ?? 0
  const served = Math.max(1, result.requests.total)
  const failures = result.errors + result.timeouts + result.non2xx
  if (failures > 0) process.stdout.write(`  (${failures} failed requests: ${variant.name})\n`)
  return {
    rps: result.requests.average,
    cpuMicros: Math.round(((after - before) * 10_000) / served),
    failures,
  }
}

/** The size of one answer as sent, and its Content-Encoding. */
function wireSize(url: string, body: string, acceptEncoding: string | undefined) {
  return new Promise<{ bytes: number; encoding: string | undefined }>((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding
    const req = request(url, { method: 'POST', headers }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

function rawPost(url: string, body: string): Promise<void> {
  return wireSize(url, body, undefined).then(() => undefined)
}

function fmt(rps: number): string {
  return Math.round(rps).toLocaleString('en-US')
}
