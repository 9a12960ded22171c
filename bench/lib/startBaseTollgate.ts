import { resolve } from 'node:path'
import { createUnlimitedKey, startTollgateProcess, writeTollgateConfig } from './processes.ts'

type Config = Record<string, unknown>

/** A started build, and the config keys it was started without (its schema lacks them). */
export type BaseTollgate = {
  key: string
  origin: string
  url: string
  pid: number | undefined
  /** Dotted paths, such as `upstreams.historyProbeMs`; empty when the build took the whole config. */
  droppedKeys: string[]
}

/**
 * Starts another build of tollgate (BENCH_BASE: a checkout with dist/ built, or its bin/tollgate.js)
 * as startTollgate starts this one, with the keys of `config` that build knows. An older build
 * refuses a config holding keys added since, naming each; the first command the bench runs with the
 * config, `keys create`, loads it as `start` does and refuses it before writing anything, so its
 * refusal is the probe (every build has that command, where `config check` is recent). Each key it
 * names is dropped from `config` and the key created again, until the build takes the config; the
 * dropped keys are logged (stderr) and returned, so that a report can say what the base ran without.
 * Any other refusal throws with the build's own message.
 */
export async function startBaseTollgate(
  dir: string,
  name: string,
  upstream: { url: string; ws?: string },
  config: Config,
  base: string,
  /** A command to run tollgate behind, as for startTollgate. */
  wrapper: string[] = [],
): Promise<BaseTollgate> {
  const bin = base.endsWith('.js') ? resolve(base) : resolve(base, 'bin/tollgate.js')
  const droppedKeys: string[] = []
  let accepted = config
  for (;;) {
    const configFile = writeTollgateConfig(dir, name, upstream, accepted)
    let key: string
    try {
      key = createUnlimitedKey(configFile, bin)
    } catch (error) {
      const unknown = getUnknownKeys(String((error as { stderr?: unknown }).stderr ?? ''))
      // a key that is not in `config` (one the bench always writes) cannot be dropped: the refusal stands
      const fewer = unknown.reduce<Config | undefined>(
        (left, path) => left && withoutKey(left, path),
        accepted,
      )
      if (unknown.length === 0 || !fewer) throw error
      droppedKeys.push(...unknown)
      accepted = fewer
      continue
    }
    if (droppedKeys.length > 0)
      process.stderr.write(
        `${name} (${bin}) starts without ${droppedKeys.join(', ')}: keys its config schema lacks\n`,
      )
    const { origin, pid } = await startTollgateProcess(configFile, bin, wrapper)
    return { key, origin, url: `${origin}/v3/${key}`, pid, droppedKeys }
  }
}

/**
 * The dotted paths of the keys a build's config error names as unknown, in either of the forms
 * builds have printed: `  upstreams.historyProbeMs: unknown key` (one line per key, since `config
 * check` came), and before it zod's own `  upstreams: Unrecognized keys: "a", "b"`.
 */
function getUnknownKeys(message: string): string[] {
  return message.split('\n').flatMap((line) => {
    const path = /^\s+(\S+): unknown key$/.exec(line)?.[1]
    if (path) return [path]
    const zod = /^\s+([^:]+): Unrecognized keys?: (.+)$/.exec(line)
    if (!zod?.[1] || !zod[2]) return []
    const prefix = zod[1] === '(top level)' ? '' : `${zod[1]}.`
    return [...zod[2].matchAll(/"([^"]+)"/g)].map((quoted) => `${prefix}${quoted[1]}`)
  })
}

/** A copy of `config` without the key at the dotted `path` (array items by index); undefined when it has none. */
function withoutKey(config: Config, path: string): Config | undefined {
  const copy = structuredClone(config)
  const keys = path.split('.')
  const last = keys.pop() ?? ''
  let parent: unknown = copy
  for (const key of keys)
    parent = typeof parent === 'object' && parent !== null ? (parent as Config)[key] : undefined
  if (typeof parent !== 'object' || parent === null || !Object.hasOwn(parent, last)) return undefined
  Reflect.deleteProperty(parent, last)
  return copy
}
