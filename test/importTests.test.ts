import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const execFileAsync = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
// the runner's own (a script, without types): what it writes for each test process
const { entrySource }: { entrySource: (files: string[], testTimeoutMs: number) => string } = await import(
  pathToFileURL(join(root, 'scripts', 'importTests.js')).href
)

/**
 * The test processes of scripts/runTests.js (scripts/importTests.js), run as the runner runs them
 * (`node --test` on an entry that imports the files): a file's tests wait until every file is
 * imported, and a test that hangs stops the process by name, with the tests before it reported.
 */
describe('test processes (scripts/importTests.js)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-import-tests-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  /** Runs an entry importing `files` (name, source) with a watch of `testTimeoutMs`: exit code and output. */
  async function runEntry(files: [string, string][], testTimeoutMs: number) {
    const paths = files.map(([name, source]) => {
      const path = join(dir, name)
      writeFileSync(path, source)
      return relative(root, path)
    })
    const entry = join(dir, `entry-${files.length}.mjs`)
    writeFileSync(entry, entrySource(paths, testTimeoutMs))
    // a runner of its own, not a child reporting to this one
    const env = { ...process.env }
    delete env.NODE_TEST_CONTEXT
    try {
      // bounded: a watch that failed would leave the hung test running
      const { stdout } = await execFileAsync(process.execPath, ['--test', '--test-reporter=tap', entry], {
        env,
        timeout: 30_000,
      })
      return { code: 0, output: stdout }
    } catch (err) {
      const { code, stdout } = err as { code: number; stdout: string }
      return { code, output: stdout }
    }
  }

  it("runs a file's tests once the files after it are imported", async () => {
    const { code, output } = await runEntry(
      [
        [
          'first.mjs',
          `import { it } from 'node:test'
           import assert from 'node:assert/strict'
           it('sees the second file imported', () => assert.equal(globalThis.secondImported, true))`,
        ],
        [
          'second.mjs',
          `await new Promise((resolve) => setTimeout(resolve, 200))
           globalThis.secondImported = true`,
        ],
      ],
      60_000,
    )
    assert.match(output, /^ok 1 - sees the second file imported/m)
    assert.equal(code, 0)
  })

  it('a test still running after the limit stops the process, naming it; the tests before it are reported', async () => {
    const { code, output } = await runEntry(
      [
        [
          'hangs.mjs',
          `import { describe, it } from 'node:test'
           describe('a file', () => {
             it('passes', () => {})
             it('hangs', () => new Promise(() => setInterval(() => {}, 1000)))
             it('never runs', () => {})
           })`,
        ],
      ],
      500,
    )
    assert.notEqual(code, 0)
    assert.match(output, /ok 1 - passes/)
    assert.match(output, /"hangs" has run for 0.5 s: this test process stops here/)
    assert.doesNotMatch(output, /never runs/)
  })
})
