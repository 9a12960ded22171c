import type { Config } from './configSchema.ts'

/**
 * The config keys a reload (SIGHUP) applies to a running gateway, each with what is under it.
 * Everything else (the listener, storage, Redis, workers, the devnet, the shared cache, metering,
 * gas indexing, the admin token, ...) is read once at start: a change to it needs a restart.
 * docs/config.md "What a reload changes" lists the same (planReload.test.ts holds them equal).
 */
const liveConfigKeys: readonly string[] = [
  'networks',
  'plans',
  'upstreams',
  'failover',
  'cache.enabled',
  'cache.maxBytes',
  'cache.maxEntryBytes',
  'server.maxBatchSize',
  'server.maxJsonDepth',
  'auth',
  'websocket.maxSubscriptions',
  'websocket.maxInFlightRequests',
  'websocket.maxBufferedBytes',
  'gas.historyBlocks',
  'metrics.token',
  'log.level',
]

export type ReloadPlan = {
  /** The config to run on: the new file's, with each refused key kept at its running value. */
  config: Config
  /** Keys whose new value is taken live (`plans.core.dailyCredits`; `networks` as a whole). */
  changed: string[]
  /** Keys whose new value needs a restart: kept at their running value. */
  refused: string[]
}

/** What a reload from `current` to `next` (both loaded and valid) changes, and what it must refuse. */
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
    if (liveConfigKeys.some((key) => name === key || name.startsWith(`${key}.`))) {
      changed.push(name)
      return
    }
    refused.push(name)
    restore(config, path, before)
  }
  walk([], current, next)
  return { config, changed, refused }
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
