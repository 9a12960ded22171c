// Builds the web dashboard (web/) into dist/dashboard/: index.html and assets/ with hashed names,
// which tollgate serves at /dashboard. Run by `npm run build` (and so by `npm install`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { build } from 'esbuild'

const outDir = new URL('../dist/dashboard/', import.meta.url)
rmSync(outDir, { recursive: true, force: true })
mkdirSync(outDir, { recursive: true })

const result = await build({
  entryPoints: [new URL('../web/main.tsx', import.meta.url).pathname],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: new URL('assets/', outDir).pathname,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
})

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path))
const script = outputs.find((name) => name.endsWith('.js'))
const style = outputs.find((name) => name.endsWith('.css'))
if (!script || !style) throw new Error(`the dashboard build made no script or style: ${outputs.join(', ')}`)

writeFileSync(
  new URL('index.html', outDir),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>tollgate dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/${style}">
<script type="module" src="/dashboard/assets/${script}"></script>
</head>
<body><div id="app"></div></body>
</html>
`,
)
