// npm run bench:startup: the CPU (user and system, as the kernel counts it) a tollgate command takes
// from spawn to its end, and `tollgate start` from spawn to its "listening" line, against `node -e ''`
// (the floor) and, with BENCH_BASE set to another checkout with dist/ built (or its bin/tollgate.js),
// that build's. What every CLI call, every gateway start and every worker pays before it does
// anything: the sum of it is much of what the e2e tests cost (each starts its own gateways and CLI
// calls). CPU seconds, not wall time: they move less with what else the machine runs. Each command
// runs BENCH_RUNS times (default 7) and the median is kept. Linux only (it reads /proc).
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const runs = Number(process.env.BENCH_RUNS ?? 7)
const base = process.env.BENCH_BASE
const builds = [
  { name: 'this build', bin: resolve('bin/tollgate.js') },
  ...(base
    ? [{ name: 'base', bin: base.endsWith('.js') ? resolve(base) : resolve(base, 'bin/tollgate.js') }]
    : []),
]

const dir = mkdtempSync(join(tmpdir(), 'tollgate-startup-'))
const config = join(dir, 'tollgate.yaml')
// a network whose node is not there: start reaches "listening" all the same, and nothing else runs
writeFileSync(
  config,
  [
    'server: { host: 127.0.0.1, port: 0 }',
    `storage: { sqlite: ${join(dir, 'tollgate.db')} }`,
    'networks:',
    '  - name: mainnet',
    '    chainId: 1',
    '    upstreams: [{ url: "http://127.0.0.1:9" }]',
    'log: { level: error }',
  ].join('\n'),
)

/**
 * A process's CPU seconds from /proc (clock ticks of 1/100 s): its own (utime, stime), or that of its
 * children it has reaped (cutime, cstime).
 */
function cpuOf(pid: number | 'self', whose: 'own' | 'children'): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] as string).split(' ')
  const [first, last] = whose === 'own' ? [11, 13] : [13, 15]
  return fields.slice(first, last).reduce((sum, field) => sum + Number(field), 0) / 100
}

/** The CPU a command takes, start to end (this process's reaped children's, before and after it). */
function commandCpu(args: string[]): number {
  const before = cpuOf('self', 'children')
  const ran = spawnSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  if (ran.status !== 0) throw new Error(`${args.join(' ')} failed: ${ran.stderr}`)
  return cpuOf('self', 'children') - before
}

/** The CPU `tollgate start` takes to its "listening" line; the process is then stopped. */
async function startCpu(bin: string): Promise<number> {
  const child = spawn(process.execPath, [bin, 'start', '--config', config], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const listening = await new Promise<boolean>((done) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString()
      if (/listening on/.test(output)) done(true)
    }
    child.stdout.on('data', look)
    child.stderr.on('data', look)
    child.once('exit', () => done(false))
  })
  if (!listening) throw new Error(`tollgate start did not reach "listening": ${output}`)
  const cpu = cpuOf(child.pid as number, 'own')
  child.kill('SIGTERM')
  await new Promise((done) => child.once('exit', done))
  return cpu
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

async function measure(sample: () => number | Promise<number>): Promise<number> {
  const values: number[] = []
  for (let run = 0; run < runs; run++) values.push(await sample())
  return median(values)
}

try {
  const floor = await measure(() => commandCpu(['-e', '']))
  const rows: string[][] = [["`node -e ''` (the floor)", ...builds.map(() => `${floor.toFixed(2)} s`)]]
  const commands: [string, (bin: string) => number | Promise<number>][] = [
    ['`tollgate --help`', (bin) => commandCpu([bin, '--help'])],
    [
      '`tollgate plans` (the config and the database read)',
      (bin) => commandCpu([bin, 'plans', '--config', config]),
    ],
    ['`tollgate keys list`', (bin) => commandCpu([bin, 'keys', 'list', '--config', config])],
    ['`tollgate start` to "listening"', startCpu],
  ]
  for (const [label, sample] of commands) {
    const cells: string[] = []
    for (const build of builds) cells.push(`${(await measure(() => sample(build.bin))).toFixed(2)} s`)
    rows.push([label, ...cells])
  }
  const header = ['command', ...builds.map((build) => `${build.name} (CPU)`)]
  const table = [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`)
  process.stdout.write(`${table.join('\n')}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
