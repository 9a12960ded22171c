// npm run bench:workload: how many calls the node gets per call clients make, on a dapp-like trace.
// A seeded trace (BENCH_SEED, default 42: the same seed, the same trace) of BENCH_USERS (default 200)
// users of three dapps, the published shares of mainnet methods (bench/lib/methodShares.ts), replayed
// in real time for BENCH_SECONDS (default 60) against each configuration of BENCH_TARGETS (default
// node,pass-through,tollgate,fleet: bench/lib/startWorkloadTarget.ts), each in front of a counting
// proxy before one anvil (a block every BENCH_BLOCK_SECONDS, default 2, each changing the dapps'
// storage and emitting their logs). tollgate runs from dist/ (`npm run build` first); the fleet on
// the test Redis and Postgres (TOLLGATE_TEST_REDIS_URL, TOLLGATE_TEST_POSTGRES_URL, or their
// defaults), under a key prefix and a schema of its own, removed afterwards. Before each tollgate
// replay, BENCH_IDLE_SECONDS (default 10) with no client count its own calls (head polls, fee indexer):
// the background. After each replay, every answer is judged against the node (bench/lib/judgeAnswers.ts).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import {
  formatBackground,
  formatByMethod,
  formatFreshness,
  formatHeadline,
} from './lib/formatWorkloadTables.ts'
import { judgeAnswers } from './lib/judgeAnswers.ts'
import { countTraceCalls, planTrace, type UserTrace } from './lib/planTrace.ts'
import { startCountingProxy, stopChildren } from './lib/processes.ts'
import { countNodeCallsPerSecond, nodeCallsBetween, readNodeCalls } from './lib/readNodeCalls.ts'
import { type AnsweredCall, type ReplayOptions, replayTrace } from './lib/replayTrace.ts'
import { startDappChain } from './lib/startDappChain.ts'
import {
  startWorkloadTarget,
  type WorkloadTarget,
  type WorkloadTargetName,
  workloadTargets,
} from './lib/startWorkloadTarget.ts'
import { type RunFacts, type RunSummary, summarizeRun } from './lib/summarizeRun.ts'
import { watchHeads } from './lib/watchHeads.ts'

const seed = Number(process.env.BENCH_SEED ?? 42)
const userCount = Number(process.env.BENCH_USERS ?? 200)
const seconds = Number(process.env.BENCH_SECONDS ?? 60)
const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 10)
const blockSeconds = Number(process.env.BENCH_BLOCK_SECONDS ?? 2)
const targetNames = (process.env.BENCH_TARGETS ?? Object.keys(workloadTargets).join(',')).split(
  ',',
) as WorkloadTargetName[]
for (const name of targetNames) if (!(name in workloadTargets)) throw new Error(`no target ${name}`)

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

/** What the bench started, stopped in reverse order whatever happens. */
const stops: (() => unknown)[] = []
try {
  const anvil = await startAnvil({
    blockTimeSeconds: blockSeconds,
    extraArgs: ['--accounts', String(userCount + 1)],
  })
  stops.unshift(() => anvil.stop())
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
  stops.unshift(() => rmSync(dir, { recursive: true, force: true }))
  const watcher = await watchHeads(anvil.wsUrl)
  stops.unshift(() => watcher.close())
  const chain = await startDappChain(anvil.url, watcher, { userCount, seed })
  stops.unshift(() => chain.stop())
  stops.unshift(stopChildren)
  const proxy = await startCountingProxy(anvil.url)
  const trace = planTrace({ seed, userCount, seconds })
  log(`trace: seed ${seed}, ${userCount} users, ${countTraceCalls(trace)} calls over ${seconds} s`)
  const runs: RunSummary[] = []
  for (const name of targetNames) {
    log(`${name}: starting`)
    const target = await startWorkloadTarget(name, proxy.url, dir)
    let replayed: Replayed
    try {
      replayed = await replayOn(target, proxy.url, trace, { chain, watcher, seed })
    } finally {
      await target.stop()
    }
    log(`${name}: judging ${replayed.answers.length} answers against the node`)
    const judgements = await judgeAnswers(replayed.answers, anvil.url, watcher)
    const run = summarizeRun({ name: workloadTargets[name], ...replayed.facts }, replayed.answers, judgements)
    if (run.errors.length > 0)
      log(`${name}: ${run.errors.length} errors, such as ${run.errors.slice(0, 3).join('; ')}`)
    if (run.wrong.length > 0)
      log(`${name}: ${run.wrong.length} wrong answers: ${run.wrong.slice(0, 5).join('; ')}`)
    runs.push(run)
  }
  console.log(formatReport(runs))
} finally {
  for (const stop of stops) await stop()
}

type Replayed = { facts: Omit<RunFacts, 'name'>; answers: AnsweredCall[] }

/**
 * The trace replayed against a started configuration: its answers, the node calls meanwhile, and
 * (for a gateway, once its start-up calls are over) its own node calls with no client calling.
 */
async function replayOn(
  target: WorkloadTarget,
  proxyUrl: string,
  trace: UserTrace[],
  options: ReplayOptions,
): Promise<Replayed> {
  // a gateway's start-up (chain identification, fee backfill) is not its background
  if (target.hasBackground) await sleep(2 * blockSeconds * 1_000)
  const backgroundPerSecond = target.hasBackground
    ? await countNodeCallsPerSecond(proxyUrl, idleSeconds)
    : undefined
  const before = await readNodeCalls(proxyUrl)
  const startedMs = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const answers = await replayTrace(trace, target.urls, options)
  delay.disable()
  const nodeCalls = nodeCallsBetween(before, await readNodeCalls(proxyUrl))
  const facts = {
    seconds: (Date.now() - startedMs) / 1_000,
    nodeCalls,
    backgroundPerSecond,
    loadAverage: ((loadavg()[0] ?? 0) + loadBefore) / 2,
    benchDelayMs: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
  }
  return { facts, answers }
}

function formatReport(runs: RunSummary[]): string {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  return [
    `Workload ${new Date().toISOString().slice(0, 16)}Z, ${commit}: seed ${seed}, ${userCount} users, ${seconds} s a configuration, a block every ${blockSeconds} s.`,
    '',
    formatHeadline(runs),
    '',
    'Answers behind the node by kind, when answered (when asked), of the answers that could show it:',
    '',
    formatFreshness(runs),
    '',
    'Node calls per client call by method (background taken out):',
    '',
    formatByMethod(runs),
    '',
    formatBackground(runs),
  ].join('\n')
}
