// What each unit-test process of scripts/runTests.js runs: it imports the unit test files one after the
// other, so that node's test runner collects all their tests in this one process.

import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const root = resolve(import.meta.dirname, '..')

/** Imports `files` (paths from the repository root); a file that cannot be loaded becomes a failing test named after it. */
export async function importTests(files) {
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
