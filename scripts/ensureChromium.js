// Browser tests drive Debian's Chromium. Installs it with apt-get when it is missing and this user may
// (root on Debian, as on CI); otherwise says how, and fails like a test would.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const path = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium'
if (!existsSync(path)) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')
  if (!canInstall) {
    console.error(
      `browser tests need Chromium at ${path}: apt-get install -y chromium (or set TOLLGATE_CHROMIUM)`,
    )
    process.exit(1)
  }
  console.log('installing Debian chromium for the browser tests')
  for (const args of [
    ['update', '-q'],
    ['install', '-y', '-q', 'chromium'],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'] })
    if (result.status !== 0) {
      console.error(`apt-get ${args.join(' ')} failed`)
      process.exit(1)
    }
  }
}
