// Runs the *.test.ts files under src/ and test/ with node's test runner (through tsx). The unit tests
// (src/**, and test/*.test.ts that are not e2e) run in one or two processes that import them all, as a
// process costs 1.5-2.4 s to start here; each e2e test (test/*.e2e.test.ts) boots gateways and nodes and
// keeps a process of its own. Two processes at a time. The end of the run prints the slowest files and
// the runner's summary (scripts/testSummary.js). The tests get a PostgreSQL and a Redis: the ones at
// TOLLGATE_TEST_POSTGRES_URL / TOLLGATE_TEST_REDIS_URL, or servers of the run's own
// (scripts/ensureServices.js), stopped when the tests end.
// Usage: node scripts/runTests.js [path-filter ...]
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureServices, isAlive } from './ensureServices.js'

const root = resolve(import.meta.dirname, '..')
const timesFile = join(root, '.tmp', 'testTimes.json')

function findTests(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

/** Seconds each file took in the last run that had it (scripts/testSummary.js keeps them). */
function readTimes() {
  try {
    return JSON.parse(readFileSync(timesFile, 'utf8'))
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

/** The module one unit-test process runs: scripts/importTests.js given its share of the files. */
function writeUnitEntry(dir, index, files) {
  const path = join(dir, `unit-${index + 1}.js`)
  const importTests = pathToFileURL(join(root, 'scripts', 'importTests.js')).href
  writeFileSync(
    path,
    `import { importTests } from '${importTests}'\nawait importTests(${JSON.stringify(files)})\n`,
  )
  return path
}

/** Entries of earlier runs that were killed before they could remove them. */
function removeStaleEntries() {
  const tmp = join(root, '.tmp')
  for (const name of existsSync(tmp) ? readdirSync(tmp) : []) {
    const runner = Number(name.replace('unit-tests-', ''))
    if (name.startsWith('unit-tests-') && !isAlive(runner))
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
const unitFiles = files.filter((file) => !file.endsWith('.e2e.test.ts'))
const e2eFiles = files.filter((file) => file.endsWith('.e2e.test.ts'))

// the entries live under .tmp/ of the repository: their paths sort before src/ and test/, and node's
// runner starts files in that order, so the two long unit processes start first
const entryDir = join(root, '.tmp', `unit-tests-${process.pid}`)
removeStaleEntries()
mkdirSync(entryDir, { recursive: true })
process.on('exit', () => rmSync(entryDir, { recursive: true, force: true }))
const unitGroups = splitEvenly(unitFiles, unitFiles.length >= 20 ? 2 : 1).filter((group) => group.length > 0)
const entries = unitGroups.map((group, index) => writeUnitEntry(entryDir, index, group))

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
    '--test-concurrency=2',
    '--test-timeout=180000',
    `--test-reporter=${reporter}`,
    '--test-reporter-destination=stdout',
    `--test-reporter=${pathToFileURL(join(root, 'scripts', 'testSummary.js')).href}`,
    '--test-reporter-destination=stdout',
    ...entries,
    ...e2eFiles.map((file) => join(root, file)),
  ],
  { stdio: 'inherit', cwd: root, env: services.env },
)
const [code, signal] = await new Promise((resolve) => tests.once('exit', (...ended) => resolve(ended)))
await services.stop()
if (services.advice && code !== 0) console.error(`\n${services.advice}`)
process.exit(code ?? (signal === 'SIGINT' ? 130 : 1))
