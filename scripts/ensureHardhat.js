// The differential tests also run on Hardhat's node, which needs Node 22: both come from
// test/fixtures/hardhat, a project of its own (so its Node never replaces the system's in npm
// scripts). Installs it from its lockfile when it is missing or older than the lockfile.
import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const project = fileURLToPath(new URL('../test/fixtures/hardhat/', import.meta.url))
const installed = `${project}node_modules/.package-lock.json`
const lock = `${project}package-lock.json`
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  console.log('installing Hardhat and Node 22 for the differential tests (test/fixtures/hardhat)')
  const result = spawnSync(
    'npm',
    ['ci', '--prefix', project, '--no-audit', '--no-fund', '--loglevel=error'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  if (result.status !== 0) {
    console.error(`npm ci --prefix ${project} failed`)
    process.exit(1)
  }
}
