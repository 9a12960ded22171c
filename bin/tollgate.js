#!/usr/bin/env node
// The `tollgate` command: the bundled JavaScript in dist/. A release (the packed tarball) ships
// dist/ built; in a checkout, `npm install` builds it (the package's `prepare` step) or `npm run build`.
import { existsSync } from 'node:fs'

const main = new URL('../dist/main.js', import.meta.url)
if (!existsSync(main)) {
  process.stderr.write(
    'tollgate is not built yet: run `npm run build` (it needs the dev dependencies: `npm install`)\n',
  )
  process.exit(1)
}
await import(main.href)
