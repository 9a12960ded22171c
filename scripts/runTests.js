// Runs the *.test.ts files under src/ and test/ with node's test runner (through tsx), in nine
// processes, three at a time: each imports its share of the files (scripts/importTests.js), then runs
// their tests one file after the other. A process costs 2-3 s of CPU to start and import the sources
// through tsx here, more than most files' tests; the files are split so that each process takes
// about as long (by each file's time in the last run, else in test/testTimes.json), unit and e2e
// files alike: the unit tests keep the cores busy while the e2e tests (test/*.e2e.test.ts) wait on
// their nodes, blocks and timers (two at a time left the two cores idle a sixth of the run, hence
// three). The end of the
// run prints the slowest files and the runner's summary (scripts/testSummary.js). The tests get a
// PostgreSQL and a Redis: the ones at TOLLGATE_TEST_POSTGRES_URL / TOLLGATE_TEST_REDIS_URL, or
// servers of the run's own (scripts/ensureServices.js), stopped when the tests end.
// Usage: node scripts/runTests.js [path-filter ...]
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureServices, isAlive } from './ensureServices.js'
import { entrySource } from './importTests.js'

const root = resolve(import.meta.dirname, '..')
const timesFile = join(root, '.tmp', 'testTimes.json')
/** The times of one whole run, committed: a new clone's first run is split by them too. */
const committedTimesFile = join(root, 'test', 'testTimes.json')

function findTests(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

/**
 * Seconds each file took in the last run that had it (scripts/testSummary.js keeps them), else in
 * the run whose times are committed.
 */
function readTimes() {
  return { ...readJson(committedTimesFile), ...readJson(timesFile) }
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return {}
  }
}

/** Splits files into `count` groups of about equal time: the longest first, each to the emptiest group. */
function splitEvenly(files, count) {
  const times = readTimes()
  // a file not timed yet weighs as its size does (about 2 s per 10 kB)
  const weight = (file) => times[file] ?? statSync(join(root, file)).size / 5000
  const groups = Array.from({ length: count }, () => ({ files: [], seconds: 0 }))
  for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
    const emptiest = groups.reduce((least, group) => (group.seconds < least.seconds ? group : least))
    emptiest.files.push(file)
    emptiest.seconds += weight(file)
  }
  return groups.map((group) => group.files.sort())
}

/** The modules the test processes run: scripts/importTests.js given each group's files. */
function writeEntries(dir, groups) {
  return groups
    .filter((files) => files.length > 0)
    .map((files, index) => {
      const path = join(dir, `tests-${index + 1}.js`)
      writeFileSync(path, entrySource(files, testTimeoutMs))
      return path
    })
}

/** Entries of earlier runs that were killed before they could remove them. */
function removeStaleEntries() {
  const tmp = join(root, '.tmp')
  for (const name of existsSync(tmp) ? readdirSync(tmp) : []) {
    const runner = Number(name.replace('test-processes-', ''))
    if (name.startsWith('test-processes-') && !isAlive(runner))
      rmSync(join(tmp, name), { recursive: true, force: true })
  }
}

const filters = process.argv.slice(2)
const files = ['src', 'test']
  .flatMap(findTests)
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort()
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}
// a test still running after 3 minutes stops its process (importTests); a process, after 20
const testTimeoutMs = 180_000
const processTimeoutMs = 20 * 60_000
// three rounds of three: the last processes to end do so close together
const concurrency = 3
const processes = 9

// the entries live under .tmp/ of the repository (the summary tells them from test files by that)
const entryDir = join(root, '.tmp', `test-processes-${process.pid}`)
removeStaleEntries()
mkdirSync(entryDir, { recursive: true })
process.on('exit', () => rmSync(entryDir, { recursive: true, force: true }))
const entries = writeEntries(entryDir, splitEvenly(files, Math.min(processes, files.length)))

// Ctrl-C reaches the tests too (one process group; the servers of the run's own have a group of their
// own); a SIGTERM to this process alone is passed on. Either way those servers are stopped once the
// tests have ended.
let tests
let interrupted = false
process.on('SIGINT', () => {
  interrupted = true
})
process.on('SIGTERM', () => {
  interrupted = true
  tests?.kill('SIGTERM')
})
const services = await ensureServices()
if (interrupted) {
  await services.stop()
  process.exit(130)
}
if (services.advice) console.error(`${services.advice}\n`)
const reporter = process.stdout.isTTY ? 'spec' : 'tap'
tests = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${processTimeoutMs}`,
    `--test-reporter=${reporter}`,
    '--test-reporter-destination=stdout',
    `--test-reporter=${pathToFileURL(join(root, 'scripts', 'testSummary.js')).href}`,
    '--test-reporter-destination=stdout',
    ...entries,
  ],
  { stdio: 'inherit', cwd: root, env: services.env },
)
const [code, signal] = await new Promise((resolve) => tests.once('exit', (...ended) => resolve(ended)))
await services.stop()
if (services.advice && code !== 0) console.error(`\n${services.advice}`)
process.exit(code ?? (signal === 'SIGINT' ? 130 : 1))
