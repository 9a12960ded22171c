// Builds the web app (web/) into dist/dashboard/: the operator's dashboard (index.html, served at
// /dashboard) and the key holders' portal (account.html, served at /account), each page with its own
// script and style in assets/ under hashed names, and the licences of the packages bundled into them
// (preact, uPlot) in THIRD_PARTY_LICENSES.md beside the pages (not served). Run by `npm run build`
// (and so by `npm install`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { writeLicences } from './thirdPartyLicences.js'

const root = new URL('../', import.meta.url)
const outDir = new URL('dist/dashboard/', root)
rmSync(outDir, { recursive: true, force: true })
mkdirSync(outDir, { recursive: true })

const result = await build({
  entryPoints: [
    fileURLToPath(new URL('web/main.tsx', root)),
    fileURLToPath(new URL('web/account/portal.tsx', root)),
  ],
  // the metafile's paths (outputsOf's entry points, the licences') are relative to it
  absWorkingDir: fileURLToPath(root),
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: fileURLToPath(new URL('assets/', outDir)),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
})

/** The script and style esbuild made for one entry point (`web/main.tsx`). */
function outputsOf(entry) {
  const [script, output] =
    Object.entries(result.metafile.outputs).find(([, each]) => each.entryPoint === entry) ?? []
  const style = output?.cssBundle
  if (!script || !style) throw new Error(`the web build made no script or style for ${entry}`)
  return { script: basename(script), style: basename(style) }
}

/** One page: its title, and its script and style under `base` (where tollgate serves the assets). */
function page(title, base, { script, style }) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/assets/${style}">
<script type="module" src="${base}/assets/${script}"></script>
</head>
<body><div id="app"></div></body>
</html>
`
}

writeFileSync(
  new URL('index.html', outDir),
  page('tollgate dashboard', '/dashboard', outputsOf('web/main.tsx')),
)
writeFileSync(
  new URL('account.html', outDir),
  page('tollgate account', '/account', outputsOf('web/account/portal.tsx')),
)

writeLicences(
  result.metafile,
  new URL('THIRD_PARTY_LICENSES.md', outDir),
  'the web app (dist/dashboard/assets/)',
)
