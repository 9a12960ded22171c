// The package's `prepare` step: `npm install` in a checkout builds dist/ (the server's bundle and the
// dashboard), as `npm run build` does. Skipped where there is nothing to do or nothing to build with:
// - under `npm pack` and `npm publish`, whose `prepack` step has just built dist/ from scratch;
// - when the dev dependencies are left out (`npm ci --omit=dev`): the bundler (esbuild) and the
//   dashboard's Preact are among them. dist/ is kept as it is; `tollgate` says so if it is missing.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const command = process.env.npm_command
if (command === 'pack' || command === 'publish') process.exit(0)

const require = createRequire(import.meta.url)
const missing = ['esbuild', 'preact'].filter((name) => {
  try {
    require.resolve(`${name}/package.json`)
    return false
  } catch {
    return true
  }
})
if (missing.length > 0) {
  process.stderr.write(
    `tollgate: not building dist/ (the dev dependencies ${missing.join(', ')} are not installed)\n`,
  )
  process.exit(0)
}
// npm names its own entry script: the npm that runs this step builds, whatever PATH holds
const npm = process.env.npm_execpath
const build = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' })
process.exit(build.status ?? 1)
