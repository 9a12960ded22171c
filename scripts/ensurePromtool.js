// The alert rules' tests run promtool, from Debian's prometheus package. Installs it with apt-get when it
// is missing and this user may (root on Debian, as on CI); otherwise says how, and fails like a test would.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const path = process.env.TOLLGATE_PROMTOOL ?? '/usr/bin/promtool'
if (!existsSync(path)) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')
  if (!canInstall) {
    console.error(
      `the alert rules' tests need promtool at ${path}: apt-get install -y prometheus (or set TOLLGATE_PROMTOOL)`,
    )
    process.exit(1)
  }
  console.log("installing Debian prometheus (promtool) for the alert rules' tests")
  for (const args of [
    ['update', '-q'],
    ['install', '-y', '-q', '--no-install-recommends', 'prometheus'],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'] })
    if (result.status !== 0) {
      console.error(`apt-get ${args.join(' ')} failed`)
      process.exit(1)
    }
  }
  if (!existsSync(path)) {
    console.error(`apt-get installed prometheus, yet there is no promtool at ${path} (set TOLLGATE_PROMTOOL)`)
    process.exit(1)
  }
}
