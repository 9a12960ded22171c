// npm run bench:profile: where a forwarded call's CPU goes, inside each process. The minimal
// pass-through (bench/lib/passThroughProxy.ts) and tollgate (cache off), both in front of one anvil, take
// the same wrk load (one call, BENCH_CONNECTIONS, default 16); after BENCH_WARMUP_SECONDS (default 3)
// of it each, V8's sampling profiler (bench/lib/profileOnSignal.mjs, 200 µs) is started in both, each
// takes BENCH_TURNS (default 2) turns of BENCH_SECONDS (default 10), alternating, and the profiles'
// samples are divided by the calls each process served. PROFILE_INTERVAL_MICROS sets the sampling
// interval (default 200: fine-grained, but the sampler then costs as much CPU again as the calls).
// BENCH_CALL picks the call (default eth_call); BENCH_BASE, another checkout with dist/ built (or its
// bin/tollgate.js), adds that build as a third target; an older build whose config schema lacks a key
// written here runs without it (bench/lib/startBaseTollgate.ts): logged, and said under the report.
//
// BENCH_PROFILE=allocations samples what is allocated instead (V8's sampling heap profiler, a sample
// every PROFILE_INTERVAL_BYTES, default 64, collected objects included): bytes allocated per call,
// by category and by own function (where V8 inlined a function, its allocations count for the
// caller). Unlike CPU time, this does not depend on what else the machine runs: two runs of one build
// agree within about 1.5% (a few hundred bytes of some 20 KB a call), where its CPU moves by a tenth
// or more between turns.
//
// A frame in a built file with a source map is counted where the map says it was made from (the
// bundle holds undici and the other packages: counted as theirs, not as tollgate's own code).
//
// Throughput and CPU ratios on a shared VM move by a quarter between identical processes; a
// process's own JavaScript per call repeats within a few percent, so this is the instrument for
// changes of a few microseconds. Needs `wrk` on the PATH (Debian: apt-get install wrk).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from 'node:fs'
import { SourceMap } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { cpuTicks, startPassThrough, startTollgate, stopChildren } from './lib/processes.ts'
import { startBaseTollgate } from './lib/startBaseTollgate.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const turns = Number(process.env.BENCH_TURNS ?? 2)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const callName = process.env.BENCH_CALL ?? 'eth_call'
const base = process.env.BENCH_BASE
const top = Number(process.env.BENCH_TOP ?? 25)
const allocations = process.env.BENCH_PROFILE === 'allocations'
if (!allocations && (process.env.BENCH_PROFILE ?? 'cpu') !== 'cpu') {
  throw new Error('BENCH_PROFILE: cpu (the default) or allocations')
}

type Target = {
  name: string
  url: string
  pid: number | undefined
  profile: string
  served: number
  /** CPU clock ticks (1/100 s) the process used while profiled */
  ticks: number
}
type ProfileNode = {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
}
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Each built file's source map, read once by `original` (null: it has none). */
const sourceMaps = new Map<string, SourceMap | null>()
type AllocationNode = {
  callFrame: ProfileNode['callFrame']
  /** Bytes sampled as allocated here, by this function itself. */
  selfSize: number
  children: AllocationNode[]
}

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-profile-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const calls = [
    ...cheapCalls(fixtures),
    {
      name: 'eth_getProof',
      method: 'eth_getProof',
      params: [fixtures.demo, [`0x${'0'.repeat(64)}`], 'latest'],
    },
  ]
  const call = calls.find((each) => each.name === callName)
  if (!call) throw new Error(`BENCH_CALL: one of ${calls.map((each) => each.name).join(', ')}`)
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })

  const gate = await profiledTollgate('tollgate')
  const pass = profiled('pass-through')
  const passThrough = await startPassThrough(anvil.url, gate.key, pass.wrapper)
  const targets: Target[] = [
    { name: 'pass-through', ...passThrough, profile: pass.profile, served: 0, ticks: 0 },
    gate.target,
  ]
  const baseGate = base && (await profiledTollgate('base', base))
  if (baseGate) targets.push(baseGate.target)

  for (const target of targets) wrk(target, body, warmupSeconds)
  for (const target of targets) signal(target)
  for (let turn = 0; turn < turns; turn++) {
    const order = turn % 2 === 0 ? targets : [...targets].reverse()
    for (const target of order) {
      const before = cpuTicks(target.pid) ?? 0
      target.served += wrk(target, body, seconds)
      target.ticks += (cpuTicks(target.pid) ?? 0) - before
    }
  }
  await Promise.all(targets.map((target) => stopProfile(target)))
  process.stdout.write(allocations ? allocationReport(targets) : cpuReport(targets))
  // what the base ran without is part of its figures
  if (baseGate && baseGate.droppedKeys.length > 0)
    process.stdout.write(
      `\nbase ran without ${baseGate.droppedKeys.join(', ')}: keys its config schema lacks\n`,
    )
} finally {
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** The CPU profiles' report: CPU per call by category, the largest natives, own functions. */
function cpuReport(targets: Target[]): string {
  // the samples are wall time while busy (a thread waiting for a core counts too): each process's
  // categories are scaled so that they add up to the CPU it used per call (/proc), and compare
  const profiles = targets.map((target) => {
    const found = perCall(JSON.parse(readFileSync(target.profile, 'utf8')), target.served)
    const cpuMicros = (target.ticks * 10_000) / target.served
    const scale = cpuMicros / (found.categories.get('all busy') ?? cpuMicros)
    const scaled = (entries: Iterable<[string, number]>) =>
      [...entries].map(([name, micros]): [string, number] => [name, micros * scale])
    return {
      categories: new Map(scaled(found.categories)),
      own: scaled(found.own),
      native: new Map(scaled(found.native)),
      cpuMicros,
    }
  })
  const categories = [
    'native (from Node)',
    'Node JavaScript',
    'undici',
    'other dependencies',
    'own code',
    'V8 program',
    'garbage collector',
  ]
  const cell = (micros: number | undefined) => (micros ?? 0).toFixed(1)
  const lines = [
    `${callName}, ${connections} connections, ${turns} turns of ${seconds} s each after ${warmupSeconds} s of warm-up.`,
    "CPU µs per call served (/proc), split as the profiler's samples are:",
    '',
    `| CPU µs per call | ${targets.map((target) => `${target.name} (${target.served.toLocaleString('en-US')} calls)`).join(' | ')} |`,
    `|---|${targets.map(() => '---').join('|')}|`,
    `| all | ${profiles.map((each) => cell(each.cpuMicros)).join(' | ')} |`,
    ...categories.map(
      (category) =>
        `| ${category} | ${profiles.map((each) => cell(each.categories.get(category))).join(' | ')} |`,
    ),
  ]
  const natives = [...new Set(profiles.flatMap((each) => [...each.native.keys()]))]
    .map((name): [string, number[]] => [name, profiles.map((each) => each.native.get(name) ?? 0)])
    .sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]))
  lines.push('', `| native, the largest | ${targets.map((target) => target.name).join(' | ')} |`)
  lines.push(`|---|${targets.map(() => '---').join('|')}|`)
  for (const [name, micros] of natives.slice(0, top / 2))
    lines.push(`| ${name} | ${micros.map(cell).join(' | ')} |`)
  for (const [index, target] of targets.entries()) {
    if (target.name === 'pass-through') continue
    lines.push(
      '',
      `Own functions of ${target.name} (self time with the builtins they call), CPU µs per call:`,
      '',
    )
    for (const [name, micros] of profiles[index]?.own.slice(0, top) ?? []) {
      lines.push(`- ${micros.toFixed(2)} ${name}`)
    }
  }
  return `${lines.join('\n')}\n`
}

/** The allocation profiles' report: bytes allocated per call by category, and by own function. */
function allocationReport(targets: Target[]): string {
  const found = targets.map((target) =>
    allocatedPerCall(JSON.parse(readFileSync(target.profile, 'utf8')), target.served),
  )
  const categories = ['Node JavaScript', 'undici', 'other dependencies', 'own code', 'V8 and Node natives']
  const cell = (bytes: number | undefined) => Math.round(bytes ?? 0).toLocaleString('en-US')
  const lines = [
    `${callName}, ${connections} connections, ${turns} turns of ${seconds} s each after ${warmupSeconds} s of warm-up.`,
    `Bytes allocated per call served (a sample every ${process.env.PROFILE_INTERVAL_BYTES ?? 64} bytes), by where the allocating code is:`,
    '',
    `| bytes per call | ${targets.map((target) => `${target.name} (${target.served.toLocaleString('en-US')} calls)`).join(' | ')} |`,
    `|---|${targets.map(() => '---').join('|')}|`,
    `| all | ${found.map((each) => cell(each.all)).join(' | ')} |`,
    ...categories.map(
      (category) =>
        `| ${category} | ${found.map((each) => cell(each.categories.get(category))).join(' | ')} |`,
    ),
  ]
  for (const [index, target] of targets.entries()) {
    if (target.name === 'pass-through') continue
    lines.push('', `Own functions of ${target.name} (with what V8 inlined into them), bytes per call:`, '')
    for (const [name, bytes] of found[index]?.own.slice(0, top) ?? []) lines.push(`- ${cell(bytes)} ${name}`)
  }
  return `${lines.join('\n')}\n`
}

/** Where a target's profile goes, and the command prefix that preloads the profiler into it. */
function profiled(name: string): { profile: string; wrapper: string[] } {
  const profile = join(dir, `${name}.${allocations ? 'heapprofile' : 'cpuprofile'}`)
  const preload = resolve('bench/lib/profileOnSignal.mjs')
  const kind = `PROFILE_KIND=${allocations ? 'allocations' : 'cpu'}`
  return { profile, wrapper: ['env', `NODE_OPTIONS=--import=${preload}`, `PROFILE_OUT=${profile}`, kind] }
}

/**
 * A tollgate (this checkout's, or the build at `base`), cache off, with the profiler preloaded; its
 * key, and the config keys it was started without (an older build's schema lacks them).
 */
async function profiledTollgate(
  name: string,
  base?: string,
): Promise<{ target: Target; key: string; droppedKeys: string[] }> {
  const { profile, wrapper } = profiled(name)
  const config = { cache: { enabled: false } }
  const started = base
    ? await startBaseTollgate(dir, name, { url: anvil.url }, config, base, wrapper)
    : {
        ...(await startTollgate(dir, name, { url: anvil.url }, config, 'bin/tollgate.js', wrapper)),
        droppedKeys: [],
      }
  const target = { name, url: started.url, pid: started.pid, profile, served: 0, ticks: 0 }
  return { target, key: started.key, droppedKeys: started.droppedKeys }
}

function signal(target: Target): void {
  if (target.pid !== undefined) process.kill(target.pid, 'SIGUSR2')
}

/** Stops the target's profiler and resolves once its profile is on disk (renamed there whole). */
async function stopProfile(target: Target): Promise<void> {
  const written = new Promise<void>((done) => {
    const watcher = watch(dir, () => {
      if (!existsSync(target.profile)) return
      watcher.close()
      done()
    })
  })
  signal(target)
  await written
}

/** `duration` seconds of wrk load on the target; the requests it completed. */
function wrk(target: Target, requestBody: string, duration: number): number {
  const output = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${duration}s`, '-s', 'bench/lib/wrkPost.lua', target.url],
    { encoding: 'utf8', env: { ...process.env, WRK_BODY: requestBody } },
  )
  if (/Non-2xx|Socket errors/.test(output)) throw new Error(`${target.name}: failed requests\n${output}`)
  return Number(/(\d+) requests in/.exec(output)?.[1] ?? 0)
}

/**
 * A profile's self time per call, by category and by own function. A builtin (a frame with no
 * script, such as JSON.parse or writev) counts for the nearest caller with one: for own code if own
 * code called it, "native" if Node's JavaScript did.
 */
function perCall(profile: CpuProfile, served: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const selfMicros = new Map<number, number>()
  // timeDeltas[i + 1] is the time from sample i to the next: the time spent where sample i was taken
  for (let index = 0; index < profile.samples.length - 1; index++) {
    const id = profile.samples[index] as number
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index + 1] ?? 0))
  }
  const categories = new Map<string, number>()
  const own = new Map<string, number>()
  const native = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros / served)
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id) as ProfileNode
    const name = node.callFrame.functionName
    if (name === '(idle)' || name === '(root)') continue
    add(categories, 'all busy', micros)
    if (name === '(program)') {
      add(categories, 'V8 program', micros)
      continue
    }
    if (name === '(garbage collector)') {
      add(categories, 'garbage collector', micros)
      continue
    }
    let caller: ProfileNode | undefined = node
    while (caller && caller.callFrame.url === '') caller = byId.get(parent.get(caller.id) ?? -1)
    const frame = caller && original(caller.callFrame)
    const category = categoryOf(frame?.url ?? '')
    if (category === 'Node JavaScript' && node !== caller) {
      add(categories, 'native (from Node)', micros)
      add(native, name || '(anonymous)', micros)
    } else add(categories, category, micros)
    if (category === 'own code') add(own, frameName(frame ?? node.callFrame), micros)
  }
  return { categories, own: [...own].sort((a, b) => b[1] - a[1]), native }
}

/**
 * An allocation profile's bytes per call, by category and by own function. What a frame without a
 * script allocates (a builtin, V8's API) counts for the nearest caller with one; with none above it
 * (V8's and Node's C++ on their own), for "V8 and Node natives".
 */
function allocatedPerCall(profile: { head: AllocationNode }, served: number) {
  const categories = new Map<string, number>()
  const own = new Map<string, number>()
  let all = 0
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes / served)
  const walk = (node: AllocationNode, scripted: ProfileNode['callFrame'] | undefined) => {
    const frame = node.callFrame.url === '' ? scripted : original(node.callFrame)
    if (node.selfSize > 0) {
      all += node.selfSize / served
      const category = frame ? categoryOf(frame.url) : 'V8 and Node natives'
      add(categories, category, node.selfSize)
      if (frame && category === 'own code') add(own, frameName(frame), node.selfSize)
    }
    for (const child of node.children) walk(child, frame)
  }
  walk(profile.head, undefined)
  return { all, categories, own: [...own].sort((a, b) => b[1] - a[1]) }
}

/**
 * A frame as the sources name it: a built file's (the bundle's chunks, which hold the packages too)
 * mapped through its source map to the file and line it was made from; any other as it is.
 */
function original(frame: ProfileNode['callFrame']): ProfileNode['callFrame'] {
  if (!frame.url.startsWith('file:')) return frame
  const file = fileURLToPath(frame.url)
  let map = sourceMaps.get(file)
  if (map === undefined) {
    const mapFile = `${file}.map`
    map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null
    sourceMaps.set(file, map)
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber)
  if (!entry || !('originalSource' in entry)) return frame
  return {
    ...frame,
    url: pathToFileURL(resolve(dirname(file), entry.originalSource)).href,
    lineNumber: entry.originalLine,
  }
}

/** Where the code at `url` belongs: Node's own JavaScript, undici, another dependency, or tollgate. */
function categoryOf(url: string): string {
  if (url.startsWith('node:')) return 'Node JavaScript'
  // wasm here is undici's HTTP parser (llhttp)
  if (url.includes('/node_modules/undici/') || url.startsWith('wasm:')) return 'undici'
  if (url.includes('/node_modules/') || url === '') return 'other dependencies'
  return 'own code'
}

function frameName(frame: ProfileNode['callFrame']): string {
  const file = frame.url.slice(frame.url.lastIndexOf('/') + 1)
  return `${frame.functionName || '(anonymous)'} (${file}:${frame.lineNumber + 1})`
}
