// Empties dist/ before `npm pack` builds it anew (the package's `prepack` step), so that a release
// carries only what today's src/ and web/ build, never a file left from an older build.
import { rmSync } from 'node:fs'

rmSync(new URL('../dist/', import.meta.url), { recursive: true, force: true })
