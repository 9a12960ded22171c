import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** The dashboard's pages as `npm run build` makes them; built here when a test runs before any build. */
export function ensureDashboardBuilt(): void {
  if (existsSync(new URL('../../dist/dashboard/index.html', import.meta.url))) return
  execFileSync(process.execPath, [new URL('../../scripts/buildDashboard.js', import.meta.url).pathname], {
    stdio: 'inherit',
  })
}
