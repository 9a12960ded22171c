import { readFileSync } from 'node:fs'

let version: string | undefined

/** The version in package.json: two folders up from src/app/ in a checkout, and from dist/app/ in a release. */
export function getPackageVersion(): string {
  if (version === undefined) {
    const packageJson = new URL('../../package.json', import.meta.url)
    version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version
  }
  return version
}
