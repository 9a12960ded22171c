import { readFileSync } from 'node:fs'
import { packageRoot } from '../config/packageRoot.ts'

let version: string | undefined

/** The version in tollgate's package.json. */
export function getPackageVersion(): string {
  if (version === undefined) {
    const packageJson = new URL('package.json', packageRoot())
    version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version
  }
  return version
}
