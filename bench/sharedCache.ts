// node --import tsx bench/sharedCache.ts: what the shared cache (Redis) costs and brings, from source (tsx).
// Three tollgate processes in front of one anvil, all with Redis configured (so metering is the same
// for all): `memory` with cache.shared.enabled false, `shared` and `shared-2` with it on.
// 1. Answers served from memory (an immutable block read, eth_blockNumber): memory against shared,
//    BENCH_HALVES (default 4) alternating halves of BENCH_SECONDS (default 4) each, 16 connections.
// 2. First reads of blocks: through `memory` (the upstream answers), through `shared-2` after `shared`
//    fetched them (Redis answers): mean latency of one call, one at a time.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { removeKeysWithPrefix } from '../test/helpers/testRedis.ts'
import { cpuTicks, startTollgate, stopChildren } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const halves = Number(process.env.BENCH_HALVES ?? 4)
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const keyPrefix = `tollgate-bench-${randomBytes(4).toString('hex')}:`
// the children run tollgate from source
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import tsx`.trim()

const post = async (url: string, method: string, params: unknown[]) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return (await response.json()) as { result: unknown }
}

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
const redis = new Redis(redisUrl)
try {
  await seedDevnet(anvil.url, { loadBlocks: 120 })
  const redisConfig = { redis: { url: redisUrl, keyPrefix } }
  const source = 'src/main.ts'
  const memory = await startTollgate(
    dir,
    'memory',
    { url: anvil.url },
    { ...redisConfig, cache: { shared: { enabled: false } } },
    source,
  )
  const shared = await startTollgate(dir, 'shared', { url: anvil.url }, redisConfig, source)
  const shared2 = await startTollgate(dir, 'shared-2', { url: anvil.url }, redisConfig, source)
  const head = Number((await post(anvil.url, 'eth_blockNumber', [])).result)
  const hashes: string[] = []
  for (let number = 1; number <= head; number++) {
    const block = (await post(anvil.url, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).result
    hashes.push((block as { hash: string }).hash)
  }

  const lines = [
    `## Shared cache (Redis): answers from memory, and first reads (${new Date().toISOString().slice(0, 10)})`,
    '',
    `Three tollgate processes from source on one anvil and one Redis, all with Redis configured; 16 connections, ${halves} alternating halves of ${seconds / halves} s.`,
    '',
    '| answered from memory | shared off req/s | shared on req/s | on/off | off CPU µs/call | on CPU µs/call |',
    '|---|---|---|---|---|---|',
  ]
  const rows: { name: string; method: string; params: unknown[] }[] = [
    { name: 'eth_getBlockByHash (immutable)', method: 'eth_getBlockByHash', params: [hashes[10], false] },
    { name: 'eth_blockNumber (head, shown-head floor)', method: 'eth_blockNumber', params: [] },
  ]
  for (const row of rows) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: row.method, params: row.params })
    const requests = { off: 0, on: 0 }
    const cpu = { off: 0, on: 0 }
    for (const target of [memory, shared]) await post(target.url, row.method, row.params)
    for (let half = 0; half < halves; half++) {
      const order = half % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)
      for (const which of order) {
        const target = which === 'off' ? memory : shared
        const ticks = cpuTicks(target.pid) ?? 0
        const result = await autocannon({
          url: target.url,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          connections: 16,
          duration: seconds / halves,
        })
        requests[which] += result.requests.total
        cpu[which] += (cpuTicks(target.pid) ?? 0) - ticks
      }
    }
    const off = requests.off / seconds
    const on = requests.on / seconds
    // clock ticks are 10 ms
    const perCall = (which: 'off' | 'on') => ((cpu[which] * 10_000) / requests[which]).toFixed(1)
    lines.push(
      `| ${row.name} | ${off.toFixed(0)} | ${on.toFixed(0)} | ${(on / off).toFixed(3)} | ${perCall('off')} | ${perCall('on')} |`,
    )
  }

  // first reads: shared fetches every block once (into Redis); then shared-2 reads them from Redis
  // and memory from anvil, alternating, one call at a time
  const firstReads = hashes.slice(20, 120)
  for (const hash of firstReads) await post(shared.url, 'eth_getBlockByHash', [hash, false])
  await new Promise((resolve) => setTimeout(resolve, 200))
  const took: Record<'redis' | 'upstream', number[]> = { redis: [], upstream: [] }
  for (const hash of firstReads) {
    for (const [which, target] of [
      ['redis', shared2],
      ['upstream', memory],
    ] as const) {
      const started = performance.now()
      await post(target.url, 'eth_getBlockByHash', [hash, false])
      took[which].push(performance.now() - started)
    }
  }
  const summary = (list: number[]) => {
    const sorted = [...list].sort((a, b) => a - b)
    const mean = list.reduce((sum, each) => sum + each, 0) / list.length
    const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0
    const over = list.filter((each) => each > 40).length
    return `${mean.toFixed(3)} | ${p50.toFixed(3)} | ${over}`
  }
  lines.push(
    '',
    `| first read of a block (not in this instance's memory), ${firstReads.length} blocks | mean ms | p50 ms | calls over 40 ms |`,
    '|---|---|---|---|',
    `| from the upstream (anvil, local; shared off) | ${summary(took.upstream)} |`,
    `| from Redis (another instance fetched it) | ${summary(took.redis)} |`,
  )
  console.log(lines.join('\n'))
} finally {
  // the gateways write to Redis as they stop: the keys go after that
  await stopChildren()
  await anvil.stop()
  await removeKeysWithPrefix(redis, keyPrefix)
  redis.disconnect()
  rmSync(dir, { recursive: true, force: true })
}
