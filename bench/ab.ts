// npm run bench:ab: this checkout's tollgate against another build of it (BENCH_BASE: the path of a
// checkout with its dist/ built, e.g. `git worktree add /tmp/base <commit> && (cd /tmp/base &&
// npm run build)`), both with the cache off in front of one anvil, in one run: forwarded cheap calls,
// each build measured BENCH_HALVES (default 4) times per row in alternating mirrored order
// (A B B A A B ...), BENCH_SECONDS (default 4) per row split across the halves. The ratio column is
// what "costs the forwarding path no more than N%" is held against. An older build whose config schema
// lacks a key written here runs without it (bench/lib/startBaseTollgate.ts): logged, and listed under
// the table.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { cheapCalls } from './lib/cheapCalls.ts'
import { combine, fmt, type Measurement, measure } from './lib/measureLoad.ts'
import { children, startTollgate } from './lib/processes.ts'
import { startBaseTollgate } from './lib/startBaseTollgate.ts'

const base = process.env.BENCH_BASE
if (!base) throw new Error('BENCH_BASE: the path of another checkout, with dist/ built')
const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const halves = Number(process.env.BENCH_HALVES ?? 4)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '16,64').split(',').map(Number)

type Target = { name: 'base' | 'this'; url: string; pid: number | undefined }

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const off = { cache: { enabled: false } }
  const baseGate = await startBaseTollgate(dir, 'base', { url: anvil.url }, off, base)
  const thisGate = await startTollgate(dir, 'this', { url: anvil.url }, off)
  const targets: Target[] = [
    { name: 'base', url: baseGate.url, pid: baseGate.pid },
    { name: 'this', url: thisGate.url, pid: thisGate.pid },
  ]
  const calls = cheapCalls(fixtures)
  const lines = [
    `| call | conns | base req/s | this req/s | this/base | base CPU µs/call | this CPU µs/call |`,
    '|---|---|---|---|---|---|---|',
  ]
  for (const call of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params })
    for (const connections of connectionsList) {
      const results = new Map<Target['name'], Measurement[]>()
      for (let half = 0; half < halves; half++) {
        const order = half % 2 === 0 ? targets : [...targets].reverse()
        for (const target of order) {
          const measured = await measure(target, body, connections, seconds / halves)
          results.set(target.name, [...(results.get(target.name) ?? []), measured])
        }
      }
      const [a, b] = [combine(results.get('base') ?? []), combine(results.get('this') ?? [])]
      const line = `| ${call.name} | ${connections} | ${fmt(a.rps)} | ${fmt(b.rps)} | ${Math.round((b.rps / a.rps) * 100)}% | ${a.cpuMicros} | ${b.cpuMicros} |`
      lines.push(line)
      process.stdout.write(`${line}\n`)
    }
  }
  // what the base ran without is part of its figures
  if (baseGate.droppedKeys.length > 0)
    lines.push('', `base ran without ${baseGate.droppedKeys.join(', ')}: keys its config schema lacks`)
  process.stdout.write(`\n${lines.join('\n')}\n`)
} finally {
  for (const child of children) child.kill('SIGTERM')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
