// What each test process of scripts/runTests.js runs: it imports its share of the test files, so that
// node's test runner collects all their tests in this one process, and runs them once every file is
// imported (a file's tests never share the event loop with the imports of the files after it). The
// files' tests run one after the other, as each file's did in a process of its own.
//
// node's --test-timeout bounds a whole process here, not each test (node 20 does not pass it on), so
// the process keeps its own watch: a test still running after `testTimeoutMs` stops the process, naming
// the test, and node's runner reports the process failed.

import { join, resolve } from 'node:path'
import { afterEach, before, beforeEach, test } from 'node:test'
import { pathToFileURL } from 'node:url'

const root = resolve(import.meta.dirname, '..')
// the watch's own timers, taken before any test can replace the global ones with mock timers
const { setTimeout, clearTimeout } = globalThis

/** The module a test process runs: importTests given `files` and `testTimeoutMs`. */
export function entrySource(files, testTimeoutMs) {
  const args = `${JSON.stringify(files)}, ${testTimeoutMs}`
  return `import { importTests } from '${import.meta.url}'\nawait importTests(${args})\n`
}

/**
 * Imports `files` (paths from the repository root), a test still running after `testTimeoutMs` ending
 * the process; a file that cannot be loaded becomes a failing test named after it.
 */
export async function importTests(files, testTimeoutMs) {
  watchForHangs(testTimeoutMs)
  const imported = importAll(files)
  // node's runner starts each test as it is declared: the first waits here until the last file is in
  before(() => imported)
  await imported
}

async function importAll(files) {
  for (const file of files) {
    try {
      await import(pathToFileURL(join(root, file)).href)
    } catch (error) {
      test(`${file} loads`, () => {
        throw error
      })
    }
  }
}

/** Every test (declared after this, so each file's) runs under a timer that ends the process. */
function watchForHangs(testTimeoutMs) {
  const timers = new Map()
  beforeEach((t) => {
    const timer = setTimeout(() => {
      const seconds = testTimeoutMs / 1000
      process.stderr.write(`\n"${t.name}" has run for ${seconds} s: this test process stops here\n`)
      process.exit(1)
    }, testTimeoutMs)
    // a test that hangs with nothing else to run is ended by node's runner itself
    timer.unref()
    timers.set(t, timer)
  })
  afterEach((t) => {
    clearTimeout(timers.get(t))
    timers.delete(t)
  })
}
