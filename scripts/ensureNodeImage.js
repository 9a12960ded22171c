// The container test builds the Dockerfile with podman on a local Node 20 base image, because no image
// registry is reachable from the machines tests run on. This makes that base once per machine:
// localhost/tollgate-node:20, a Debian bookworm (debootstrap minbase, from the mirror this machine's apt
// uses) with this machine's node, npm, Node headers (for native addons), CA bundle and npm's global config,
// as the official node:20-bookworm-slim has them; then builds the Dockerfile on it, so
// that the test's build is quick. Installs podman, runc and debootstrap with apt-get when they are
// missing and this user may (root on Debian, as on CI); otherwise says how and fails.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const nodeImage = 'localhost/tollgate-node:20'
const packages = ['podman', 'runc', 'debootstrap']

ensurePackages()
const exists = spawnSync('podman', ['image', 'exists', nodeImage], { env: podmanEnv() })
if (exists.status !== 0) makeImage()
buildImage()

function ensurePackages() {
  const missing = packages.filter((name) => !onPath(name))
  if (missing.length === 0) return
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    fail(`the container test needs ${missing.join(', ')}: apt-get install -y ${packages.join(' ')}`)
  }
  console.log(`installing Debian ${missing.join(', ')} for the container test`)
  run('apt-get', ['update', '-q'], 'ignore')
  run('apt-get', ['install', '-y', '-q', ...packages], 'ignore')
}

function makeImage() {
  if (process.getuid?.() !== 0) fail(`making ${nodeImage} needs root (debootstrap)`)
  const started = Date.now()
  const root = mkdtempSync(join(tmpdir(), 'tollgate-node-'))
  try {
    console.log(`making ${nodeImage} (debootstrap, once per machine)`)
    run('debootstrap', ['--variant=minbase', 'bookworm', root, debianMirror()], 'ignore')
    cpSync(process.execPath, join(root, 'usr/bin/node'))
    cpSync('/usr/lib/node_modules/npm', join(root, 'usr/lib/node_modules/npm'), { recursive: true })
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/bin/npm'))
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/bin/npx'))
    const headers = existsSync('/usr/include/node/node_version.h')
    if (headers) cpSync('/usr/include/node', join(root, 'usr/include/node'), { recursive: true })
    cpSync('/etc/ssl/certs', join(root, 'etc/ssl/certs'), { recursive: true, dereference: true })
    if (existsSync('/usr/etc/npmrc')) cpSync('/usr/etc/npmrc', join(root, 'usr/etc/npmrc'))
    rmSync(join(root, 'var/cache/apt/archives'), { recursive: true, force: true })
    const tar = spawnSync('tar', ['-C', root, '-c', '.'], { maxBuffer: 2 ** 31 })
    if (tar.status !== 0) fail(`tar of ${root} failed`)
    // node-gyp builds against the copied headers rather than downloading them (nodejs.org may be unreachable)
    const changes = ['ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt']
    if (headers) changes.push('ENV npm_config_nodedir=/usr')
    const imported = spawnSync(
      'podman',
      ['import', ...changes.flatMap((change) => ['--change', change]), '-', nodeImage],
      {
        input: tar.stdout,
        env: podmanEnv(),
        stdio: ['pipe', 'ignore', 'inherit'],
      },
    )
    if (imported.status !== 0) fail(`podman import ${nodeImage} failed`)
    console.log(`made ${nodeImage} in ${Math.round((Date.now() - started) / 1000)} s`)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/**
 * Builds the Dockerfile (Debian's compiler, npm ci, the native addon, npm run build, the runtime
 * dependencies, the image), so that the test's own build, which must fit a test file's time, finds
 * every layer in podman's build cache. The build and runtime stages are tagged
 * (localhost/tollgate-build:build, :runtime: no image is built on them, so untagged they would be
 * pruned), and so is the image (:image); the modules stage lives on as their parent. Minutes the
 * first time on a machine; seconds once only the sources changed (the runtime dependencies' layers
 * stay).
 */
function buildImage() {
  const started = Date.now()
  const root = new URL('..', import.meta.url).pathname
  const imageTag = 'localhost/tollgate-build:image'
  const before = imageId(imageTag)
  // what an earlier version of this script tagged (the build stage alone): kept, it would hold its layers
  spawnSync('podman', ['rmi', '--ignore', 'localhost/tollgate-build:cache'], {
    env: podmanEnv(),
    stdio: 'ignore',
  })
  for (const target of ['build', 'runtime', undefined]) {
    const args = ['build', '--format', 'docker', '--network=host', '--build-arg', `NODE_IMAGE=${nodeImage}`]
    if (target) args.push('--target', target)
    args.push('--tag', target ? `localhost/tollgate-build:${target}` : imageTag, '.')
    const built = spawnSync('podman', args, {
      cwd: root,
      env: podmanEnv(),
      encoding: 'utf8',
      maxBuffer: 2 ** 28,
    })
    if (built.status !== 0) fail(`podman ${args.join(' ')} failed:\n${built.stdout}${built.stderr}`)
  }
  // the layers of earlier sources (an npm ci of an older lock is 600 MB), now untagged: disk stays
  // bounded (the image's own stage has no label: its earlier build goes by its id, with the parents
  // it alone had)
  const prune = ['image', 'prune', '--force', '--filter', 'label=tollgate.stage=build']
  spawnSync('podman', prune, { env: podmanEnv(), stdio: 'ignore' })
  const after = imageId(imageTag)
  if (before && after && before !== after) {
    const removed = spawnSync('podman', ['rmi', before], { env: podmanEnv(), encoding: 'utf8' })
    // a container left by an interrupted test still uses it: said, to remove by hand
    if (removed.status !== 0)
      console.log(`could not remove the image built before (${before}): ${removed.stderr.trim()}`)
  }
  const seconds = Math.round((Date.now() - started) / 1000)
  if (seconds > 30) console.log(`built the image in ${seconds} s (cached for the container test)`)
}

/** The id of the image `name`, or undefined when there is none. */
function imageId(name) {
  const found = spawnSync('podman', ['image', 'inspect', '--format', '{{.Id}}', name], {
    env: podmanEnv(),
    encoding: 'utf8',
  })
  return found.status === 0 ? found.stdout.trim() : undefined
}

/** The Debian mirror this machine's apt uses for bookworm (never written into the repository). */
function debianMirror() {
  const dir = '/etc/apt/sources.list.d'
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => /\.(sources|list)$/.test(name)) : []
  for (const name of files) {
    const text = readFileSync(join(dir, name), 'utf8')
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1]
      if (uri && /^Suites:.*\bbookworm\b/m.test(stanza) && !uri.includes('security')) return uri
    }
    const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m.exec(text)
    if (line?.[1]) return line[1]
  }
  return 'http://deb.debian.org/debian'
}

/** Podman's defaults (crun, default ulimits) fail in these sandboxes: the repository's containers.conf. */
function podmanEnv() {
  const conf = new URL('../test/fixtures/containers.conf', import.meta.url).pathname
  return { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? conf }
}

function onPath(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0
}

function run(command, args, stdout) {
  const result = spawnSync(command, args, { stdio: ['ignore', stdout, 'inherit'] })
  if (result.status !== 0) fail(`${command} ${args.join(' ')} failed`)
}

function fail(message) {
  console.error(message)
  process.exit(1)
}
