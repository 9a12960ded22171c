import { methodShares } from './methodShares.ts'
import type { RunSummary } from './summarizeRun.ts'

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${((part / whole) * 100).toFixed(1)}%`)
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
const sum = (values: Iterable<number>) => [...values].reduce((total, each) => total + each, 0)

function backgroundCalls(run: RunSummary): number {
  return (run.backgroundPerSecond?.total ?? 0) * run.seconds
}

function idealRatio(run: RunSummary): number {
  const ideal = [...run.ideal.values()]
  return sum(ideal.map((each) => each.distinct)) / sum(ideal.map((each) => each.calls))
}

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`
const header = (names: string[]) => [row(names), row(names.map(() => '---'))]
const msPair = (a: number, b: number) => `${fixed(a, 1)} / ${fixed(b, 1)}`

/** The headline table: node calls per client call against the ideal, freshness, correctness, latency. */
export function formatHeadline(runs: RunSummary[]): string {
  const lines = header([
    'configuration',
    'client calls',
    'node calls per client call',
    'without background',
    "the trace's ideal",
    'behind the node when answered',
    'behind the node when asked',
    'wrong answers',
    'p50 / p99 ms',
  ])
  for (const run of runs) {
    const counted = [...run.freshness.values()]
    const checked = sum(counted.map((each) => each.checked))
    const behind = sum(counted.map((each) => each.behind))
    const behindWhenSent = sum(counted.map((each) => each.behindWhenSent))
    const { clientCalls, latenciesMs } = run
    lines.push(
      row([
        run.name,
        clientCalls.toLocaleString('en-US'),
        fixed(run.nodeCalls.total / clientCalls),
        fixed((run.nodeCalls.total - backgroundCalls(run)) / clientCalls),
        fixed(idealRatio(run)),
        `${percent(behind, checked)} of ${checked} (${percent(behind, clientCalls)} of all)`,
        percent(behindWhenSent, checked),
        run.wrong.length,
        msPair(quantile(latenciesMs, 0.5), quantile(latenciesMs, 0.99)),
      ]),
    )
  }
  return lines.join('\n')
}

const tipLabels = [
  'eth_blockNumber',
  'the latest block',
  'eth_call at latest',
  'eth_getBalance at latest',
  'eth_getTransactionCount at latest',
]

/** Answers behind the node by kind (when answered, and when asked), how long, and what else went wrong. */
export function formatFreshness(runs: RunSummary[]): string {
  const lines = header([
    'configuration',
    ...tipLabels,
    'ms behind (median / max)',
    '2 or more blocks behind',
    'eth_blockNumber backwards',
    'errors',
    'load average',
    "the bench's event-loop delay p99 / max ms",
  ])
  for (const run of runs) {
    const kinds = tipLabels.map((label) => {
      const counted = run.freshness.get(label)
      if (counted === undefined) return '-'
      const { behind, behindWhenSent, checked } = counted
      return `${percent(behind, checked)} (${percent(behindWhenSent, checked)}) of ${checked}`
    })
    const behindMs =
      run.behindMs.length === 0 ? '-' : msPair(quantile(run.behindMs, 0.5), run.behindMs.at(-1) ?? NaN)
    lines.push(
      row([
        run.name,
        ...kinds,
        behindMs,
        `${run.twoOrMoreBehind.answered} (${run.twoOrMoreBehind.asked})`,
        run.backwards,
        run.errors.length,
        fixed(run.loadAverage, 1),
        msPair(run.benchDelayMs.p99, run.benchDelayMs.max),
      ]),
    )
  }
  return lines.join('\n')
}

/** Node calls per client call by method (background taken out), for each configuration, beside the ideal's. */
export function formatByMethod(runs: RunSummary[]): string {
  const first = runs[0]
  if (first === undefined) return ''
  const lines = [
    `| method | share of client calls | the trace's ideal | ${runs.map((run) => run.name).join(' | ')} |`,
    `|---|---|---|${runs.map(() => '---|').join('')}`,
  ]
  for (const method of Object.keys(methodShares)) {
    const ideal = first.ideal.get(method)
    if (ideal === undefined) continue
    const perRun = runs.map((run) => {
      const calls = run.ideal.get(method)?.calls ?? 0
      const background = (run.backgroundPerSecond?.byMethod[method] ?? 0) * run.seconds
      return fixed(((run.nodeCalls.byMethod[method] ?? 0) - background) / calls)
    })
    lines.push(
      `| ${method} | ${percent(ideal.calls, first.clientCalls)} | ${fixed(ideal.distinct / ideal.calls)} | ${perRun.join(' | ')} |`,
    )
  }
  return lines.join('\n')
}

/** What each configuration asks the node of its own accord, counted while no client called. */
export function formatBackground(runs: RunSummary[]): string {
  const lines = ['| configuration | node calls/s with no clients | by method |', '|---|---|---|']
  for (const run of runs) {
    const background = run.backgroundPerSecond
    if (background === undefined) continue
    const methods = Object.entries(background.byMethod)
      .sort(([, a], [, b]) => b - a)
      .map(([method, perSecond]) => `${method} ${fixed(perSecond)}`)
    lines.push(`| ${run.name} | ${fixed(background.total)} | ${methods.join(', ')} |`)
  }
  return lines.join('\n')
}
