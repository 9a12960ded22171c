import { existsSync } from 'node:fs'

/**
 * The folder of tollgate's package.json (as a URL ending in `/`): the nearest one up from this
 * module, whether it runs from src/config/ (a checkout, the tests) or from the build's dist/ or
 * dist/chunks/ (where the bundle put it).
 */
export function packageRoot(): URL {
  let dir = new URL('./', import.meta.url)
  while (!existsSync(new URL('package.json', dir))) {
    const parent = new URL('../', dir)
    if (parent.href === dir.href) throw new Error(`no package.json above ${import.meta.url}`)
    dir = parent
  }
  return dir
}
