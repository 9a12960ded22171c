import type { Buffer } from 'node:buffer'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../config/packageRoot.ts'

export type DashboardAsset = { body: Buffer; contentType: string }
export type DashboardAssets = {
  index: Buffer
  /** The key holders' portal's page (account.html), served at /account; undefined in an older build. */
  portal: Buffer | undefined
  assets: ReadonlyMap<string, DashboardAsset>
}

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
}

/**
 * The built web app (`npm run build` writes dist/dashboard/: index.html, account.html and assets/ with hashed
 * names), read once. Undefined when it was not built.
 */
export function loadDashboardAssets(): DashboardAssets | undefined {
  const dir = new URL('dist/dashboard/', packageRoot())
  if (!existsSync(new URL('index.html', dir))) return undefined
  const assetsDir = new URL('assets/', dir)
  const names = existsSync(assetsDir) ? readdirSync(fileURLToPath(assetsDir)) : []
  return {
    index: readFileSync(new URL('index.html', dir)),
    portal: existsSync(new URL('account.html', dir)) ? readFileSync(new URL('account.html', dir)) : undefined,
    assets: new Map(
      names.map((name) => [
        name,
        {
          body: readFileSync(new URL(name, assetsDir)),
          contentType: contentTypes[extname(name)] ?? 'application/octet-stream',
        },
      ]),
    ),
  }
}
