// Builds the server (src/) into dist/: src/main.ts and everything it imports, bundled by esbuild
// into dist/main.js and the chunks it loads when a command needs them (dist/chunks/: the gateway,
// the devnet, tracing). Node loads a few dozen files where it would resolve and read some 1,800
// (the sources' 380 and the packages' own), so a gateway starts on about 40% less CPU (npm run
// bench:startup; docs/development.md, "The build"). Run by `npm run build` (and so by `npm
// install`); with --no-sourcemap (the release's `prepack`), without source maps. The types are
// checked by `npm run typecheck`, not here. The bundled packages are dev dependencies (a release
// installs only the ones left out, below), and their licences go to dist/THIRD_PARTY_LICENSES.md
// (scripts/thirdPartyLicences.js).
//
// Left out of the bundle, loaded from node_modules as they are: packages that load files of their
// own when they run (better-sqlite3's native addon, pino's worker threads); optional addons that
// packages look for and do without (pg-native, bufferutil, utf-8-validate); and packages written as
// CommonJS that are imported with import() (ioredis, and OpenTelemetry's, which does so itself): in
// a bundle, such a module's chunk has a default export only, where Node gives its named ones too
// (the build refuses such a chunk, below). Each of these is loaded only when it is used. The bundled
// prom-client requires @opentelemetry/api (for exemplars): found because it is external, and a
// dependency.
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { writeLicences } from './thirdPartyLicences.js'

const root = new URL('../', import.meta.url)
const dist = new URL('dist/', root)
const sourcemap = !process.argv.includes('--no-sourcemap')

// a new build replaces the last one's files (the dashboard, scripts/buildDashboard.js's, stays)
for (const name of existsSync(dist) ? readdirSync(dist) : [])
  if (name !== 'dashboard') rmSync(new URL(name, dist), { recursive: true, force: true })

const result = await build({
  entryPoints: [fileURLToPath(new URL('src/main.ts', root))],
  // the metafile's paths are relative to it (the licences below read them)
  absWorkingDir: fileURLToPath(root),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: ['node20'],
  outdir: fileURLToPath(dist),
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap,
  external: [
    'better-sqlite3',
    'pino',
    'pg-native',
    'bufferutil',
    'utf-8-validate',
    'ioredis',
    '@opentelemetry/*',
  ],
  // the bundled packages written as CommonJS ask for `require` (Node's own modules, and the external
  // packages above) and `__filename`: each file of the bundle has its own
  banner: {
    js: [
      "import { createRequire as __tollgateRequire } from 'node:module'",
      "import { fileURLToPath as __tollgatePath } from 'node:url'",
      'const require = __tollgateRequire(import.meta.url)',
      'const __filename = __tollgatePath(import.meta.url)',
    ].join('; '),
  },
  metafile: true,
  logLevel: 'warning',
})

// a CommonJS module imported with import() (see above): its named exports would be undefined
const defaultOnly = Object.entries(result.metafile.outputs)
  .filter(([, output]) => output.exports.length === 1 && output.exports[0] === 'default')
  .map(([file]) => file)
if (defaultOnly.length > 0) {
  throw new Error(
    `a CommonJS module is imported with import(), which the bundle gives a default export only: import it statically or list its package as external:\n${defaultOnly.join('\n')}`,
  )
}

// the bundle carries the packages' code, so it carries their licences
writeLicences(
  result.metafile,
  new URL('THIRD_PARTY_LICENSES.md', dist),
  "the server's bundle (dist/main.js, dist/chunks/)",
)
