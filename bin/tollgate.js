#!/usr/bin/env node
// The `tollgate` command: the compiled JavaScript in dist/, built from src/ by `npm run build`
// (which `npm install` runs as the package's `prepare` step).
import { existsSync } from 'node:fs'

const main = new URL('../dist/main.js', import.meta.url)
if (!existsSync(main)) {
  process.stderr.write('tollgate is not built yet: run `npm run build` (npm install does it too)\n')
  process.exit(1)
}
await import(main.href)
