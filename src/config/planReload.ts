import type { Config } from './configSchema.ts'
import { getDefaultNetwork } from './getDefaultNetwork.ts'
import { getLiveKeyEffect } from './liveConfigKeys.ts'
import { ConfigError } from './loadConfig.ts'

export type ReloadPlan = {
  /** The config to run on: the new file's, with each refused key kept at its running value. */
  config: Config
  /** Keys whose new value is taken live (`plans.core.dailyCredits`; `networks` as a whole). */
  changed: string[]
  /** Keys whose new value needs a restart: kept at their running value. */
  refused: string[]
  /** The network the un-prefixed URLs serve from now on, when it is another one than before (named in `defaultNetwork`). */
  moved: { from: string | undefined; to: string | undefined } | undefined
}

/**
 * What a reload from `current` to `next` (both loaded and valid) changes, and what it must refuse
 * (liveConfigKeys lists the keys it takes). Throws ConfigError, the file refused whole, when it would
 * move the un-prefixed URLs to another network (or to none) without `defaultNetwork` naming it.
 */
export function planReload(current: Config, next: Config): ReloadPlan {
  const config = structuredClone(next)
  const changed: string[] = []
  const refused: string[] = []
  const walk = (path: string[], before: unknown, after: unknown): void => {
    if (isEqual(before, after)) return
    const name = path.join('.')
    // a section is looked into, to name each key in it (`networks` is taken whole: each network is
    // compared by the reload itself)
    if (name !== 'networks' && isRecord(before) && isRecord(after)) {
      for (const key of new Set([...Object.keys(before), ...Object.keys(after)]))
        walk([...path, key], before[key], after[key])
      return
    }
    if (getLiveKeyEffect(name) !== undefined) {
      changed.push(name)
      return
    }
    refused.push(name)
    restore(config, path, before)
  }
  walk([], current, next)
  return { config, changed, refused, moved: defaultNetworkMove(current, config, next) }
}

/** A change of the un-prefixed URLs' network, allowed only when the new file names it in `defaultNetwork`. */
function defaultNetworkMove(current: Config, planned: Config, file: Config): ReloadPlan['moved'] {
  const from = getDefaultNetwork(current)
  const to = getDefaultNetwork(planned)
  if (from === to) return undefined
  if (file.defaultNetwork !== undefined) return { from, to }
  const served = from === undefined ? 'no network (defaultNetwork: false)' : `network '${from}'`
  const rule = planned.devnet ? 'the embedded devnet' : 'the first network listed'
  const wouldServe = to === undefined ? 'none' : `'${to}' (${rule}, as defaultNetwork is unset)`
  throw new ConfigError(
    `defaultNetwork: the un-prefixed URLs (/v3/KEY, /ws/v3/KEY) serve ${served}; this file would move them to ${wouldServe}. Set defaultNetwork: ${from ?? 'false'} to keep them, or defaultNetwork: ${to ?? 'false'} to move them`,
  )
}

/** Puts `value` (undefined: no key) back at `path` in `config`. */
function restore(config: Config, path: string[], value: unknown): void {
  let parent: Record<string, unknown> = config
  for (const key of path.slice(0, -1)) {
    const child = parent[key]
    if (!isRecord(child)) parent[key] = {}
    parent = parent[key] as Record<string, unknown>
  }
  const last = path[path.length - 1] as string
  if (value === undefined) delete parent[last]
  else parent[last] = structuredClone(value)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((each, i) => isEqual(each, b[i]))
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].every((key) => isEqual(a[key], b[key]))
  }
  return false
}
