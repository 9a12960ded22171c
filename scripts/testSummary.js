// A reporter for node's test runner (scripts/runTests.js adds it after the usual one): at the end of
// the run it prints the ten slowest test files, every failed test with its file (todos apart), and
// the runner's summary (tests, pass, fail ...), and keeps each file's seconds in .tmp/testTimes.json
// for the next run to split the files evenly between its processes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const timesFile = join(root, '.tmp', 'testTimes.json')
const summaryWords = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms']

/** @param {AsyncIterable<{ type: string, data: any }>} events */
export default async function* testSummary(events) {
  /** A test process, start to end (named after its entry, under .tmp/: scripts/runTests.js). */
  const processMs = new Map()
  /** The time of a file's top-level tests (files share processes). */
  const testsMs = new Map()
  const failures = []
  const todos = []
  const summary = new Map()
  for await (const { type, data } of events) {
    const file = data.file === undefined ? undefined : relative(root, data.file)
    if (type === 'test:complete' && data.nesting === 0 && data.name === data.file) {
      processMs.set(file, data.details.duration_ms)
    } else if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && file !== undefined) {
      testsMs.set(file, (testsMs.get(file) ?? 0) + data.details.duration_ms)
    }
    if (type === 'test:fail' && data.details.error?.failureType !== 'subtestsFailed') {
      // a unit file that failed to load is a test of the process that imports it, named after the file
      const where = file === undefined || file.startsWith('.tmp/') ? '' : `${file}:${data.line} › `
      // a todo's failure (what is still to be built) fails no run: listed as a todo
      const todo = data.todo !== undefined && data.todo !== false
      ;(todo ? todos : failures).push(`${where}${data.name}: ${firstLine(data.details.error)}`)
    }
    if (type === 'test:diagnostic' && data.nesting === 0) {
      const [word, value] = data.message.split(' ')
      if (summaryWords.includes(word)) summary.set(word, value)
    }
  }
  const seconds = new Map([...testsMs].map(([file, ms]) => [file, ms / 1000]))
  keepTimes(seconds)
  const lines = ['', 'slowest test files (seconds, their tests):']
  for (const [file, s] of [...seconds].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    lines.push(`${s.toFixed(1).padStart(8)}  ${file}`)
  }
  if (processMs.size > 0) {
    const processes = [...processMs].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    const times = processes.map(([entry, ms]) => `${basename(entry, '.js')} ${(ms / 1000).toFixed(1)} s`)
    lines.push(`in ${processes.length} process(es): ${times.join(', ')}`)
  }
  if (todos.length > 0)
    lines.push('', `todo, still failing (${todos.length}):`, ...todos.map((line) => `  ${line}`))
  if (failures.length > 0)
    lines.push('', `failed (${failures.length}):`, ...failures.map((line) => `  ${line}`))
  const counts = summaryWords
    .filter((word) => summary.has(word) && word !== 'duration_ms')
    .map((word) => `${word} ${summary.get(word)}`)
  const wallSeconds = (Number(summary.get('duration_ms') ?? 0) / 1000).toFixed(1)
  lines.push('', `${counts.join(', ')}; ${wallSeconds} s`, '')
  yield lines.join('\n')
}

function firstLine(error) {
  const cause = error?.cause ?? error
  return String(cause?.message ?? cause ?? 'failed').split('\n')[0]
}

/** Merges this run's seconds into the kept ones (a filtered run keeps the other files' times). */
function keepTimes(seconds) {
  if (seconds.size === 0) return
  let kept = {}
  try {
    kept = JSON.parse(readFileSync(timesFile, 'utf8'))
  } catch {}
  for (const [file, s] of seconds) kept[file] = Number(s.toFixed(2))
  mkdirSync(dirname(timesFile), { recursive: true })
  writeFileSync(timesFile, `${JSON.stringify(kept, null, 1)}\n`)
}
