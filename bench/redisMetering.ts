// npm run bench:redis: what sharing credits through Redis costs, in one run.
// 1. Throughput: two tollgates with the cache off in front of one anvil, one metering in-process, one
//    with `redis` set (its own key prefix on 127.0.0.1:6379, removed afterwards); forwarded cheap
//    calls at BENCH_CONNECTIONS (default 16,64), each gateway measured BENCH_HALVES (default 4) times
//    per row in mirrored order (A B B A ...), BENCH_SECONDS (default 4) per row split across them.
// 3. The meter alone (no HTTP): admissions per second of 64 concurrent callers on one key, in-process,
//    on Redis with its leases, and on Redis with leases forced to one call (every admission an
//    exchange: what the end of a balance costs), for BENCH_METER_SECONDS (default 3) each.
// 2. Per-second limit across instances: three meters (three "instances") on one Redis spend one
//    account's 8,000 credits per second as fast as they can for BENCH_RATE_SECONDS (default 10);
//    the credits admitted against the limit's own allowance (a full bucket, then the rate).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { systemClock } from '../src/metering/clock.ts'
import { createMeter } from '../src/metering/createMeter.ts'
import { createRedisBank } from '../src/metering/createRedisBank.ts'
import { createSqliteUsageStore } from '../src/metering/createSqliteUsageStore.ts'
import type { MeterSubject } from '../src/metering/meterTypes.ts'
import { openSqlite } from '../src/store/openSqlite.ts'
import { removeKeysWithPrefix } from '../test/helpers/testRedis.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { combine, fmt, type Measurement, measure } from './lib/measureLoad.ts'
import { startTollgate, stopChildren } from './lib/processes.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const halves = Number(process.env.BENCH_HALVES ?? 4)
const rateSeconds = Number(process.env.BENCH_RATE_SECONDS ?? 10)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '16,64').split(',').map(Number)
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const keyPrefix = `tollgate-bench-${process.pid}:`

type Target = { name: 'in-process' | 'redis'; url: string; pid: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const off = { cache: { enabled: false } }
  const local = await startTollgate(dir, 'local', { url: anvil.url }, off)
  const shared = await startTollgate(
    dir,
    'redis',
    { url: anvil.url },
    { ...off, redis: { url: redisUrl, keyPrefix } },
  )
  const targets: Target[] = [
    { name: 'in-process', url: local.url, pid: local.pid },
    { name: 'redis', url: shared.url, pid: shared.pid },
  ]
  const lines = [
    '| call | conns | in-process req/s | redis req/s | redis/in-process | in-process CPU µs/call | redis CPU µs/call |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const call of cheapCalls(fixtures).slice(0, 2)) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    for (const connections of connectionsList) {
      const results = new Map<Target['name'], Measurement[]>()
      for (let half = 0; half < halves; half++) {
        for (const target of half % 2 === 0 ? targets : [...targets].reverse()) {
          const measured = await measure(target, body, connections, seconds / halves)
          results.set(target.name, [...(results.get(target.name) ?? []), measured])
        }
      }
      const [a, b] = [combine(results.get('in-process') ?? []), combine(results.get('redis') ?? [])]
      const line = `| ${call.name} | ${connections} | ${fmt(a.rps)} | ${fmt(b.rps)} | ${Math.round((b.rps / a.rps) * 100)}% | ${a.cpuMicros} | ${b.cpuMicros} |`
      lines.push(line)
      process.stdout.write(`${line}\n`)
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n`)
  process.stdout.write(`${await measureSharedRate()}\n\n`)
  process.stdout.write(`${await measureMeterAlone()}\n`)
} finally {
  // the gateways give their leases back to Redis as they stop: the keys go after that
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
  await removeKeys()
}

/** Three meters on one Redis spending one account's per-second budget flat out. */
async function measureSharedRate(): Promise<string> {
  const creditsPerSecond = 8_000
  const payer: MeterSubject = {
    accountId: 1,
    keyId: 1,
    accountCounter: 'account:1',
    keyCounter: 'key:1',
    accountDailyCredits: 1e12,
    accountCreditsPerSecond: creditsPerSecond,
    keyDailyCredits: undefined,
    keyCreditsPerSecond: undefined,
  }
  const instances = await Promise.all(
    [1, 2, 3].map(async () => {
      const bank = await createRedisBank({ url: redisUrl, keyPrefix: `${keyPrefix}rate:` })
      const meter = await createMeter({
        store: createSqliteUsageStore(openSqlite(':memory:')),
        clock: systemClock,
        flushMs: 1_000,
        bank,
      })
      return { bank, meter }
    }),
  )
  let admitted = 0
  let refused = 0
  const startedMs = Date.now()
  const endsMs = startedMs + rateSeconds * 1_000
  // 16 callers per instance, each spending 80 credits a call, as fast as admitted
  await Promise.all(
    instances.flatMap(({ meter }) =>
      Array.from({ length: 16 }, async () => {
        while (Date.now() < endsMs) {
          try {
            const admission = await meter.admit(payer, 80)
            meter.settle(admission, [{ method: 'eth_blockNumber', network: 'devnet', credits: 80 }])
            admitted += 80
          } catch {
            refused++
            await new Promise((resolve) => setTimeout(resolve, 5))
          }
          await nextTurn()
        }
      }),
    ),
  )
  const elapsedSeconds = (Date.now() - startedMs) / 1000
  for (const { meter, bank } of instances) {
    await meter.close()
    await bank.close()
  }
  const allowance = creditsPerSecond * (1 + elapsedSeconds)
  return [
    '| instances | limit (credits/s) | window (s) | credits admitted | allowance (full bucket + rate × window) | admitted / allowance | refused calls |',
    '|---|---|---|---|---|---|---|',
    `| 3 | ${fmt(creditsPerSecond)} | ${elapsedSeconds.toFixed(1)} | ${fmt(admitted)} | ${fmt(allowance)} | ${Math.round((admitted / allowance) * 100)}% | ${fmt(refused)} |`,
  ].join('\n')
}

/** Admissions per second through one meter, 64 callers on one key, in three set-ups. */
async function measureMeterAlone(): Promise<string> {
  const meterSeconds = Number(process.env.BENCH_METER_SECONDS ?? 3)
  const payer: MeterSubject = {
    accountId: 2,
    keyId: 2,
    accountCounter: 'account:2',
    keyCounter: 'key:2',
    accountDailyCredits: 1e12,
    accountCreditsPerSecond: 1e9,
    keyDailyCredits: undefined,
    keyCreditsPerSecond: undefined,
  }
  const setups: [string, number | undefined][] = [
    ['in-process', undefined],
    ['redis, leases', 1],
    ['redis, one call per lease', 80 / 1e9],
  ]
  const lines = ['| meter | admissions/s | vs in-process |', '|---|---|---|']
  let baseline = 0
  for (const [name, leaseSeconds] of setups) {
    const bank =
      leaseSeconds === undefined
        ? undefined
        : await createRedisBank({ url: redisUrl, keyPrefix: `${keyPrefix}alone-${lines.length}:` })
    const meter = await createMeter({
      store: createSqliteUsageStore(openSqlite(':memory:')),
      clock: systemClock,
      flushMs: 1_000,
      bank,
      ...(leaseSeconds === undefined ? {} : { leaseSeconds }),
    })
    let admitted = 0
    const endsMs = Date.now() + meterSeconds * 1_000
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (Date.now() < endsMs) {
          const admission = await meter.admit(payer, 80)
          meter.settle(admission, [{ method: 'eth_blockNumber', network: 'devnet', credits: 80 }])
          admitted++
          await nextTurn()
        }
      }),
    )
    await meter.close()
    await bank?.close()
    const perSecond = admitted / meterSeconds
    if (baseline === 0) baseline = perSecond
    lines.push(`| ${name} | ${fmt(perSecond)} | ${Math.round((perSecond / baseline) * 100)}% |`)
  }
  return lines.join('\n')
}

async function removeKeys(): Promise<void> {
  const redis = new Redis(redisUrl)
  await removeKeysWithPrefix(redis, keyPrefix)
  redis.disconnect()
}
