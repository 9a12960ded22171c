// Runs every *.test.ts under src/ and test/ with node's test runner (through tsx).
// Usage: node scripts/runTests.js [path-filter ...]
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
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
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=180000', ...files],
  { stdio: 'inherit' },
)
process.exit(result.status ?? 1)
