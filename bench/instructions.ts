// npm run bench:instructions: CPU instructions per forwarded cheap call, counted by valgrind's
// callgrind, for the minimal pass-through (bench/lib/passThroughProxy.ts), the same answering with the
// headers tollgate's answers carry (its three credit headers and Content-Length: what tollgate's API
// makes every forwarded call pay in node:http's header checks), and tollgate with its cache
// off (and, with BENCH_BASE set to another checkout with dist/ built, that build too), in front of one
// anvil. Counts are of the process's own code (JavaScript, V8, Node, libc; not the kernel): they do not
// depend on what else the machine runs, where req/s and CPU seconds on two shared cores move 10-30%.
// What still moves them is the process's own occasional work landing in a count: a full garbage
// collection; V8's compiler, whose thread callgrind starves, so it runs on the main thread here;
// the young generation, which V8 sizes by the process's speed, so it is fixed here (see `callgrind`
// below). The figure to compare builds with, and
// to see what a change costs per call, next to (not instead of) the req/s benches. Each process runs
// under callgrind (about 50x slower), is warmed up with BENCH_WARMUP calls (default 12,000), then counts
// BENCH_CALLS (default 5,000) calls at BENCH_CONNECTIONS (default 16), BENCH_COUNTS times (default 5),
// of each cheap call (or of those BENCH_METHODS names, e.g. `eth_call;eth_blockNumber`), keeping the
// lowest count (each count's figure is printed to stderr). With BENCH_L2_BYTES (the CPU's L2 per core,
// e.g. 524288) callgrind also simulates the caches, with that as the last level, and each row adds the
// L2 misses per call (code, and data read and written): what a call's code and data cost beyond the
// instructions, under load, where L2 misses go to a shared L3 (the run takes about twice as long). An
// older build whose config schema lacks some of the keys written here (such as upstreams.historyProbeMs)
// runs without them: the keys it names as unknown are dropped for it alone
// (bench/lib/startBaseTollgate.ts), logged, and listed under the table; this build's config is always
// the whole one.
// With BENCH_REQUEST_LOG=off, tollgate runs without its request log (by default it is on, at its
// default sample rate: docs/benchmarks.md, "The request log's cost").
// With BENCH_KEEP_DUMPS set, the callgrind dumps are kept (their folder printed) for callgrind_annotate.
// Needs valgrind (Debian: apt-get install valgrind).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { startPassThrough, startTollgate, stopChildren } from './lib/processes.ts'
import { startBaseTollgate } from './lib/startBaseTollgate.ts'

const calls = Number(process.env.BENCH_CALLS ?? 5_000)
const onlyMethods = process.env.BENCH_METHODS?.split(';')
const warmupCalls = Number(process.env.BENCH_WARMUP ?? 12_000)
const countsKept = Number(process.env.BENCH_COUNTS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const base = process.env.BENCH_BASE
const keepDumps = process.env.BENCH_KEEP_DUMPS !== undefined
const l2Bytes = process.env.BENCH_L2_BYTES ? Number(process.env.BENCH_L2_BYTES) : undefined
if (l2Bytes !== undefined && !(Number.isInteger(l2Bytes) && l2Bytes > 0)) {
  throw new Error('BENCH_L2_BYTES: expected the L2 cache size in bytes, such as 524288')
}

type Target = { name: string; url: string; pid: number; dumps: string }

/** The young generation's semi-spaces (MiB) of every target: what V8 grows them to at full speed. */
const semiSpaceMiB = 16

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
const callgrind = (name: string) => [
  'valgrind',
  '--tool=callgrind',
  ...(l2Bytes ? ['--cache-sim=yes', `--LL=${l2Bytes},8,64`] : []),
  '--smc-check=all-non-file',
  `--callgrind-out-file=${join(dir, `${name}.%p`)}`,
  `--log-file=${join(dir, `${name}.%p.log`)}`,
  // V8 optimises hot functions on a thread of its own, which under callgrind gets the CPU only in
  // turns and finishes its queue long after the warm-up (counts of one process seen at 186,000 to
  // 554,000 a call, the difference V8's compiler): done on the main thread instead, each function is
  // compiled once it is hot, in the warm-up, as a process that is not slowed 50x does in its first
  // seconds (measured: a plain tollgate compiles 304 functions in its first 20,000 calls, 3 more in
  // the next 60,000)
  process.execPath,
  '--no-concurrent-recompilation',
  // a target idles for minutes while another is counted; V8's memory reducer then runs full GCs with
  // no tick pending, which can leave process.nextTick's tick literal megamorphic for good (about
  // 30,000 instructions a call, in whichever process it hits): off, the counts are of the code
  '--no-memory-reducer',
  // V8 sizes the young generation by how many bytes a millisecond the process allocates: slowed 50x,
  // a target looked idle and kept it small, so it ran 11-14 scavenges every 1,000 calls where the
  // same process at full speed runs 1.7 (--trace-gc, both tollgate and the pass-through at 16 MB
  // semi-spaces there), and how much collection a count held moved with the run's speed: each
  // target is given the young generation it grows to at full speed
  `--min-semi-space-size=${semiSpaceMiB}`,
  `--max-semi-space-size=${semiSpaceMiB}`,
]
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  // under callgrind a request's headers can wait in the socket past the 10 s that refuses a slow
  // client (seen on a slow machine: connections closed mid-count)
  // work done by the clock rather than per call (head polls, history probes, usage flushes, the
  // alert sender's look for due deliveries: a database query a second) is put
  // off past the count: under callgrind a call takes 50x longer, so it would weigh on each call by
  // how slow the run was, not by what the call costs
  const off = {
    cache: { enabled: false },
    server: { port: 0, headersTimeoutMs: 600_000, requestTimeoutMs: 0 },
    upstreams: { headPollMs: 600_000, historyProbeMs: 600_000 },
    metering: { flushMs: 600_000 },
    alerts: { pollMs: 600_000 },
    // BENCH_REQUEST_LOG=off counts tollgate without its request log (on: its default sample rate)
    requestLog: { enabled: process.env.BENCH_REQUEST_LOG !== 'off', flushMs: 600_000 },
  }
  const toTarget = (name: string, gate: { url: string; pid: number | undefined }): Target => {
    const pid = gate.pid as number
    return { name, url: gate.url, pid, dumps: join(dir, `${name}.${pid}`) }
  }
  const gate = await startTollgate(
    dir,
    'tollgate',
    { url: anvil.url },
    off,
    'bin/tollgate.js',
    callgrind('tollgate'),
  )
  const targets = [toTarget('tollgate', gate)]
  const baseGate =
    base && (await startBaseTollgate(dir, 'base', { url: anvil.url }, off, base, callgrind('base')))
  if (baseGate) targets.push(toTarget('base', baseGate))
  // the references: the pass-through, and the same answering with the headers tollgate's answers carry
  const references: Target[] = []
  for (const [name, answers] of [
    ['pass-through', 'plain'],
    ['pass-through+headers', 'headers'],
  ] as const) {
    const proxy = await startPassThrough(anvil.url, gate.key, callgrind(name), answers)
    const pid = proxy.pid as number
    references.push({ name, url: proxy.url, pid, dumps: join(dir, `${name}.${pid}`) })
  }
  targets.unshift(...references)

  const names = targets.map((target) => target.name)
  const compared = names.slice(references.length)
  const columns = [
    ...names.map((name) => `${name} instructions/call`),
    ...references.flatMap((reference) => compared.map((name) => `${name}/${reference.name}`)),
    ...(l2Bytes ? names.map((name) => `${name} L2 misses/call`) : []),
  ]
  const lines = [`| call | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---|').join('')}`]
  const dumpsTaken = new Map<string, number>()
  const measured = cheapCalls(fixtures).filter((call) => !onlyMethods || onlyMethods.includes(call.name))
  if (measured.length === 0)
    throw new Error(`BENCH_METHODS: expected some of ${cheapCalls(fixtures).map((call) => call.name)}`)
  for (const call of measured) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    const counts: Count[] = []
    for (const target of targets) {
      await load(target, body, warmupCalls)
      // counted several times, the lowest kept: a full garbage collection (tens of millions of
      // instructions) or a late compilation that falls in one count is the process's, not this call's
      const each: Count[] = []
      for (let count = 0; count < countsKept; count++) {
        execFileSync('callgrind_control', ['--zero', String(target.pid)], { stdio: 'ignore' })
        await load(target, body, calls)
        execFileSync('callgrind_control', ['--dump', String(target.pid)], { stdio: 'ignore' })
        const dump = (dumpsTaken.get(target.name) ?? 0) + 1
        dumpsTaken.set(target.name, dump)
        each.push(countIn(`${target.dumps}.${dump}`, calls))
      }
      const figures = each.map((count) => Math.round(count.instructions).toLocaleString('en-US'))
      process.stderr.write(`${call.name} ${target.name}: ${figures.join(', ')}\n`)
      counts.push(each.reduce((low, count) => (count.instructions < low.instructions ? count : low)))
    }
    const cells = [
      ...counts.map((count) => Math.round(count.instructions).toLocaleString('en-US')),
      ...references.flatMap((_, index) => {
        const reference = counts[index]?.instructions ?? 1
        const ratios = counts.slice(references.length).map((count) => count.instructions / reference)
        return ratios.map((ratio) => `${ratio.toFixed(3)}x`)
      }),
      ...(l2Bytes ? counts.map((count) => Math.round(count.l2Misses).toLocaleString('en-US')) : []),
    ]
    const line = `| ${call.name} | ${cells.join(' | ')} |`
    lines.push(line)
    process.stdout.write(`${line}\n`)
  }
  // what the base ran without is part of its figures
  if (baseGate && baseGate.droppedKeys.length > 0)
    lines.push('', `base ran without ${baseGate.droppedKeys.join(', ')}: keys its config schema lacks`)
  process.stdout.write(`\n${lines.join('\n')}\n`)
} finally {
  // waited for: a process still writing (a callgrind dump, its database) would race the directory's removal
  await stopChildren()
  await anvil.stop()
  if (keepDumps) process.stderr.write(`callgrind dumps kept in ${dir}\n`)
  else rmSync(dir, { recursive: true, force: true })
}

/** `amount` calls of `body` at `connections` at once; any failed call throws, saying why. */
async function load(target: Target, body: string, amount: number): Promise<void> {
  const reasons = new Set<string>()
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections,
        amount,
        // under the cache simulation a call can take seconds
        timeout: 120,
      },
      (err, done) => (err ? reject(err) : resolve(done)),
    )
    run.on('reqError', (err: Error) => reasons.add(err.message))
  })
  if (result.errors + result.timeouts + result.non2xx > 0) {
    const { errors, timeouts, non2xx } = result
    const counts = JSON.stringify({ errors, timeouts, non2xx })
    throw new Error(`${target.name}: failed requests (${counts}: ${[...reasons].join('; ')})`)
  }
}

type Count = { instructions: number; l2Misses: number }

/**
 * Per call, from one callgrind dump's `events:` and `summary:` lines: the instructions, and (with the
 * cache simulation) the last level's misses: code, data read, data written.
 */
function countIn(file: string, calls: number): Count {
  const text = readFileSync(file, 'utf8')
  const events = /^events: (.+)$/m.exec(text)?.[1]?.split(' ')
  const summary = /^summary: (.+)$/m.exec(text)?.[1]?.split(' ').map(Number)
  if (!events || !summary) throw new Error(`no summary in ${file}`)
  // an event callgrind did not record (no cache simulation) counts 0
  const total = (event: string) => (events.includes(event) ? (summary[events.indexOf(event)] ?? 0) : 0)
  const l2Misses = total('ILmr') + total('DLmr') + total('DLmw')
  return { instructions: total('Ir') / calls, l2Misses: l2Misses / calls }
}
