import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** The dashboard's and the portal's pages as `npm run build` makes them; built here when a test runs before any build. */
export function ensureDashboardBuilt(): void {
  const built = ['index.html', 'account.html'].every((page) =>
    existsSync(new URL(`../../dist/dashboard/${page}`, import.meta.url)),
  )
  if (built) return
  execFileSync(process.execPath, [new URL('../../scripts/buildDashboard.js', import.meta.url).pathname], {
    stdio: 'inherit',
  })
}
