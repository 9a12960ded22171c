import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { parse, stringify } from 'yaml'
import { exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'

// The release as a user gets it: `npm pack` (whose prepack step builds dist/ from scratch), the
// tarball installed with --omit=dev into an empty folder, and the installed `tollgate` run as a user
// runs it. One part is supplied: better-sqlite3's install script looks for a prebuilt binary (on
// GitHub, out of reach here) before it compiles SQLite from source (minutes on a busy 2-core
// machine); it is handed, as a local prebuild, the binary this checkout's own `npm install` compiled
// from the same version, so it takes the path a user's online install takes. (Should the registry
// serve a newer better-sqlite3 in the range than the checkout's lock file names, it compiles from
// source instead: slower, and still a real install.)

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const manifest = readJson(join(root, 'package.json')) as {
  version: string
  scripts: Record<string, string>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

/**
 * better-sqlite3's binary as its install script (prebuild-install) looks for a prebuild: a tarball of
 * build/Release/ named by version, Node ABI, platform and architecture, in the folder this answers.
 */
async function localPrebuilds(dir: string): Promise<string> {
  const source = join(root, 'node_modules', 'better-sqlite3')
  const { version } = readJson(join(source, 'package.json')) as { version: string }
  const stage = join(dir, 'stage')
  cpSync(
    join(source, 'build', 'Release', 'better_sqlite3.node'),
    join(stage, 'build', 'Release', 'better_sqlite3.node'),
  )
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await run('tar', ['czf', join(dir, name), '-C', stage, 'build'])
  return dir
}

/** What `npm pack` reads to build and pack: the build's inputs and the files it ships. */
const packInputs = [
  'package.json',
  'README.md',
  'LICENSE',
  'bin',
  'src',
  'web',
  'scripts',
  'docs',
  'deploy',
  'tsconfig.json',
]

/** This environment without npm's variables (the outer `npm test`'s) and tollgate's, node on PATH. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|tollgate_)/i.test(name)),
  )
  env.PATH = [dirname(process.execPath), env.PATH].join(delimiter)
  return env
}

/** Every package installed under `dir` (node_modules/, nested ones included), by name. */
function installedPackages(dir: string): string[] {
  const modules = join(dir, 'node_modules')
  if (!existsSync(modules)) return []
  return readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
    )
    .flatMap((name) => [name, ...installedPackages(join(modules, name))])
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  )
}

/**
 * The packages a module of the build loads by name, Node's own left out: its `import` and `export ...
 * from` statements (each starts a line, as esbuild writes them, and may run over several up to its
 * `;`), `import()` calls, and the `require()` calls of the packages bundled into it. Text in the
 * bundled packages' strings that reads like an import starts no line.
 */
function importedPackages(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const patterns = [
    /^(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"\n]+)['"]/gm,
    /^import\s*['"]([^'"\n]+)['"]/gm,
    /(?<![\w$.])import\(\s*['"]([^'"\n]+)['"]\s*\)/g,
    /(?<![\w$.])(?:__)?require\(\s*['"]([^'"\n]+)['"]\s*\)/g,
  ]
  return patterns
    .flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1] as string))
    .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
    .filter((specifier) => !builtinModules.includes(specifier))
    .map(packageOf)
}

/** The package a specifier or a path under node_modules/ names (`@scope/name/file` is `@scope/name`). */
function packageOf(specifier: string): string {
  return specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')
}

/** Native addons that bundled packages (pg, ws) look for and do without: not installed, not needed. */
const optionalAddons = ['pg-native', 'bufferutil', 'utf-8-validate']

describe('the release: npm pack, then npm install --omit=dev of the tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-release-'))
  const app = join(dir, 'app')
  const installed = join(app, 'node_modules', 'tollgate')
  const configFile = join(app, 'tollgate.yaml')
  const env = cleanEnv()
  const tollgate = (args: string[]) =>
    run(join(app, 'node_modules', '.bin', 'tollgate'), args, { cwd: app, env, timeout: 60_000 })
  /** What `npm install` of the tarball printed. */
  let installOutput = ''

  before(
    async () => {
      // packed from a copy: the pack's build must not empty this checkout's dist/ under the tests
      // that run from it
      const source = join(dir, 'source')
      for (const entry of packInputs)
        if (existsSync(join(root, entry))) cpSync(join(root, entry), join(source, entry), { recursive: true })
      symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'))
      await run('npm', ['pack', '--pack-destination', dir], { cwd: source, env, timeout: 5 * 60_000 })
      const tarball = join(dir, `tollgate-${manifest.version}.tgz`)
      mkdirSync(app)
      // the project's word on install scripts, as docs/deploy.md gives it: better-sqlite3's may run
      // (it fetches or builds its native addon); anvil's (a fallback download) may not, once asked for
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({
          private: true,
          allowScripts: { 'better-sqlite3': true, '@foundry-rs/anvil': false },
        }),
      )
      const installed = await run(
        'npm',
        ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', tarball],
        {
          cwd: app,
          env: {
            ...env,
            npm_config_better_sqlite3_local_prebuilds: await localPrebuilds(join(dir, 'prebuilds')),
          },
          timeout: 5 * 60_000,
        },
      )
      installOutput = installed.stdout + installed.stderr
      writeFileSync(
        configFile,
        stringify({
          server: { host: '127.0.0.1', port: 0 },
          storage: { sqlite: join(app, 'data', 'tollgate.db') },
          devnet: { blockTimeSeconds: 2, seed: true },
          log: { level: 'warn' },
        }),
      )
    },
    { timeout: 10 * 60_000 },
  )
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('ships bin/, dist/ (the dashboard built), deploy/, docs and the README: no sources, tests or source maps', () => {
    const files = filesUnder(installed).map((file) => relative(installed, file))
    const top = new Set(files.map((file) => file.split('/')[0]))
    assert.deepEqual(
      [...top].sort(),
      [
        'README.md',
        'bin',
        'deploy',
        'dist',
        'docs',
        'package.json',
        ...(existsSync(join(root, 'LICENSE')) ? ['LICENSE'] : []),
      ].sort(),
    )
    for (const built of [
      'bin/tollgate.js',
      'dist/main.js',
      'dist/dashboard/index.html',
      'docs/config.md',
      'deploy/grafana/tollgate.json',
    ])
      assert.ok(files.includes(built), `${built} shipped`)
    assert.ok(
      files.some((file) => /^dist\/dashboard\/assets\/main-\w+\.js$/.test(file)),
      'dashboard script shipped',
    )
    const unwanted = files.filter((file) => /\.map$|\.test\.js$|\.tsx?$/.test(file))
    assert.deepEqual(unwanted, [])
    // built without source maps, so nothing points at a map that is not there
    const pointing = files.filter(
      (file) =>
        file.endsWith('.js') && readFileSync(join(installed, file), 'utf8').includes('sourceMappingURL'),
    )
    assert.deepEqual(pointing, [])
  })

  it("installs only runtime dependencies (not the devnet's anvil), and dist/ imports nothing else", () => {
    const devOnly = Object.keys(manifest.devDependencies)
    const present = installedPackages(app).filter((name) => devOnly.includes(name))
    assert.deepEqual(present, [], 'no devDependency installed')
    assert.deepEqual(
      installedPackages(app).filter((name) => name.startsWith('@foundry-rs/')),
      [],
      'no anvil',
    )
    const runtime = new Set(Object.keys(manifest.dependencies))
    const imports = filesUnder(join(installed, 'dist'))
      .filter((file) => file.endsWith('.js') && !file.includes('/dashboard/'))
      .flatMap((file) => importedPackages(file).map((name) => `${relative(installed, file)}: ${name}`))
    assert.ok(
      imports.some((each) => each.endsWith(': better-sqlite3')),
      'the scan sees imports',
    )
    assert.deepEqual(
      imports.filter((each) => {
        const name = each.split(': ')[1] as string
        return !runtime.has(name) && !optionalAddons.includes(name)
      }),
      [],
      'every package dist/ imports is a runtime dependency',
    )
  })

  it("carries the licence of every package bundled into dist/: the server's and the web app's", () => {
    // the server's bundle names each module it took from a package in a comment (`// node_modules/…`)
    const serverPackages = filesUnder(join(installed, 'dist'))
      .filter((file) => file.endsWith('.js') && !file.includes('/dashboard/'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^\/\/ (?:.*\/)?node_modules\/(.+)$/gm)])
      .map((match) => packageOf(match[1] as string))
    assert.ok(
      serverPackages.includes('viem') && serverPackages.includes('undici'),
      'the scan sees bundled packages',
    )
    // the web app's (minified, without such comments): what its sources import
    const webPackages = filesUnder(join(root, 'web'))
      .filter((file) => /\.tsx?$/.test(file))
      .flatMap((file) => [
        ...readFileSync(file, 'utf8').matchAll(/^import (?!type\b)[^;]*?from '([^.'][^']*)'/gm),
      ])
      .map((match) => packageOf(match[1] as string))
    assert.ok(webPackages.includes('preact'), "the scan sees the web app's imports")
    for (const [notices, packages] of [
      [join(installed, 'dist', 'THIRD_PARTY_LICENSES.md'), serverPackages],
      [join(installed, 'dist', 'dashboard', 'THIRD_PARTY_LICENSES.md'), webPackages],
    ] as const) {
      // each under its heading, `## name version (licence)`, its texts fenced after it (a package
      // bundled in two versions has two, each with its text)
      const sections = readFileSync(notices, 'utf8').split(/^## (\S+) \S+ \(.*\)$/m)
      const carried = new Map<string, string>()
      for (let at = 1; at + 1 < sections.length; at += 2) {
        const name = sections[at] as string
        carried.set(name, `${carried.get(name) ?? ''}${sections[at + 1]}`)
      }
      assert.deepEqual(
        [...new Set(packages)].filter((name) => !/copyright|permission/i.test(carried.get(name) ?? '')),
        [],
        `${relative(installed, notices)}: each bundled package with its licence text`,
      )
    }
  })

  it('ends its install without a notice about install scripts: the release ships no `prepare`', () => {
    assert.doesNotMatch(installOutput, /install-scripts|allowScripts/, installOutput)
    assert.match(installOutput, /added \d+ packages/)
    const shipped = readJson(join(installed, 'package.json')) as { scripts: Record<string, string> }
    assert.equal(shipped.scripts.prepare, undefined)
    assert.equal(shipped.scripts.build, manifest.scripts.build, 'the rest as the checkout has it')
    assert.equal(
      readJson(join(root, 'package.json')).scripts.prepare,
      'node scripts/prepare.js',
      "the checkout's kept",
    )
  })

  it("tollgate --version prints package.json's version", async () => {
    assert.equal((await tollgate(['--version'])).stdout, `${manifest.version}\n`)
    assert.match((await tollgate(['--help'])).stdout, /-v, --version/)
  })

  it('the CLI on an SQLite file: migrate, keys create, list, show and revoke, plans, usage, config check', async () => {
    const config = ['--config', configFile]
    const migrated = JSON.parse((await tollgate(['migrate', '--json', ...config])).stdout)
    assert.ok(migrated.applied.length > 0, 'migrations applied to a new file')
    const created = JSON.parse(
      (await tollgate(['keys', 'create', '--name', 'release', '--json', ...config])).stdout,
    )
    assert.match(created.key, /^[0-9a-f]{32}$/)
    const listed = JSON.parse((await tollgate(['keys', 'list', '--json', ...config])).stdout)
    assert.deepEqual(
      listed.map((key: { key: string; name: string }) => [key.key, key.name]),
      [[created.key, 'release']],
    )
    const shown = JSON.parse((await tollgate(['keys', 'show', created.key, '--json', ...config])).stdout)
    assert.deepEqual([shown.key, shown.status], [created.key, 'active'])
    assert.equal((await tollgate(['keys', 'revoke', created.key, ...config])).stdout, 'revoked\n')
    assert.equal(
      JSON.parse((await tollgate(['plans', '--json', ...config])).stdout).core.dailyCredits,
      3_000_000,
    )
    assert.deepEqual(JSON.parse((await tollgate(['usage', '--json', ...config])).stdout), [])
    const checked = parse((await tollgate(['config', 'check', ...config])).stdout)
    assert.deepEqual(checked.storage, { sqlite: join(app, 'data', 'tollgate.db') })
  })

  it('tollgate start of the embedded devnet without anvil: one line saying what to install, exit code 1', async () => {
    const failed = await tollgate(['start', '--config', configFile]).then(
      () => assert.fail('the devnet started without anvil'),
      (err: { code: number; stdout: string; stderr: string }) => err,
    )
    assert.equal(failed.code, 1)
    assert.equal(
      failed.stderr,
      'tollgate could not start: the embedded devnet needs anvil, which this install left out: npm install @foundry-rs/anvil (beside tollgate; -g for a global install), or start with a config that names your nodes (--config FILE)\n',
    )
    assert.doesNotMatch(failed.stdout, /listening/)
  })

  it('tollgate start: the embedded devnet (anvil from its npm package, asked for) answers; SIGTERM stops it with exit code 0', async () => {
    const added = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '@foundry-rs/anvil'],
      {
        cwd: app,
        env,
        timeout: 5 * 60_000,
      },
    )
    assert.doesNotMatch(added.stdout + added.stderr, /install-scripts/)
    const { key } = JSON.parse(
      (await tollgate(['keys', 'create', '--json', '--config', configFile])).stdout,
    ) as { key: string }
    const gateway = await startGatewayProcess(['start', '--config', configFile], {
      bin: join(installed, 'bin', 'tollgate.js'),
      cwd: app,
      timeoutMs: 120_000,
    })
    try {
      assert.match(gateway.output(), /devnet seeded: Demo contract 0x[0-9a-f]{40}/)
      const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'))
      assert.equal(answer.status, 200)
      assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
    } finally {
      gateway.child.kill('SIGTERM')
      assert.equal(await exited(gateway.child), 0, gateway.output())
    }
  })
})
