import { readFileSync } from 'node:fs'
import process from 'node:process'
import { parse as parseYaml } from 'yaml'
import type { z } from 'zod'
import { type Config, configSchema } from './configSchema.ts'
import { devnetNetworkName } from './devnetNetworkName.ts'
import { tracingEnvProblems } from './tracingEnv.ts'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Reads and validates the config file; with no file (or a file without `networks`), the embedded
 * devnet on SQLite.
 * Errors name the file, the path inside it and what was expected. Environment variables fill keys
 * the file leaves out: TOLLGATE_ADMIN_TOKEN is `admin.token`, TOLLGATE_OIDC_CLIENT_SECRET is
 * `accounts.oidc.clientSecret` (when `accounts.oidc` is set). Four override the file:
 * TOLLGATE_POSTGRES_URL is `storage: { postgres }` and TOLLGATE_REDIS_URL is `redis.url` (deployments
 * keep credentials out of the file), TOLLGATE_HOST and TOLLGATE_PORT are `server.host` and `server.port`
 * (a container image listens on every address of its own network, wherever its file came from).
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  return withEnv(readConfig(file), env)
}

function withEnv(config: Config, env: NodeJS.ProcessEnv): Config {
  if (config.admin.token === undefined && env.TOLLGATE_ADMIN_TOKEN !== undefined)
    config.admin.token = env.TOLLGATE_ADMIN_TOKEN
  const oidc = config.accounts.oidc
  if (oidc && oidc.clientSecret === undefined && env.TOLLGATE_OIDC_CLIENT_SECRET)
    oidc.clientSecret = env.TOLLGATE_OIDC_CLIENT_SECRET
  withListenEnv(config, env)
  const tracing = tracingEnvProblems(config.tracing, env)
  if (tracing.length > 0) throw new ConfigError(`environment: invalid tracing\n${tracing.join('\n')}`)
  const overrides = configSchema.pick({ storage: true, redis: true }).safeParse({
    storage: env.TOLLGATE_POSTGRES_URL ? { postgres: env.TOLLGATE_POSTGRES_URL } : undefined,
    redis: env.TOLLGATE_REDIS_URL
      ? { url: env.TOLLGATE_REDIS_URL, keyPrefix: config.redis?.keyPrefix }
      : undefined,
  })
  if (!overrides.success)
    throw new ConfigError(
      `environment: invalid TOLLGATE_POSTGRES_URL or TOLLGATE_REDIS_URL\n${overrides.error.issues.flatMap(formatIssue).join('\n')}`,
    )
  if (env.TOLLGATE_POSTGRES_URL) config.storage = overrides.data.storage
  if (env.TOLLGATE_REDIS_URL) config.redis = overrides.data.redis
  return config
}

function withListenEnv(config: Config, env: NodeJS.ProcessEnv): void {
  const listen = configSchema.shape.server.safeParse({
    host: env.TOLLGATE_HOST || undefined,
    port: env.TOLLGATE_PORT ? Number(env.TOLLGATE_PORT) : undefined,
  })
  if (!listen.success)
    throw new ConfigError(
      `environment: invalid TOLLGATE_HOST or TOLLGATE_PORT\n${listen.error.issues.map(formatIssue).join('\n')}`,
    )
  if (env.TOLLGATE_HOST) config.server.host = listen.data.host
  if (env.TOLLGATE_PORT) config.server.port = listen.data.port
}

function readConfig(file: string | undefined): Config {
  if (file === undefined) return parseConfig({ devnet: {} }, '(defaults)')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (cause) {
    throw new ConfigError(`${file}: cannot read the config file (${(cause as NodeJS.ErrnoException).code})`)
  }
  let raw: unknown
  try {
    raw = parseYaml(text) ?? {}
  } catch (cause) {
    throw new ConfigError(`${file}: not valid YAML: ${(cause as Error).message}`)
  }
  return parseConfig(raw, file)
}

function parseConfig(raw: unknown, source: string): Config {
  const result = configSchema.safeParse(raw)
  const lines = result.success ? [] : result.error.issues.flatMap(formatIssue)
  // only a config without the key means the devnet: an empty list is more likely a mistake than a wish
  if (hasEmptyNetworks(raw))
    lines.push('  networks: at least one network is needed; leave the key out for the embedded devnet')
  if (!result.success || lines.length > 0)
    throw new ConfigError(`${source}: invalid config\n${lines.join('\n')}`)
  const config = result.data
  const names = new Set<string>()
  for (const network of config.networks) {
    if (names.has(network.name))
      throw new ConfigError(`${source}: networks: duplicate network name '${network.name}'`)
    names.add(network.name)
  }
  if (config.networks.length === 0 && config.devnet === undefined)
    config.devnet = { blockTimeSeconds: 2, seed: true }
  const named = config.defaultNetwork
  if (config.devnet) names.add(devnetNetworkName)
  if (typeof named === 'string' && !names.has(named))
    throw new ConfigError(
      `${source}: defaultNetwork: no network is named '${named}' (the networks are ${[...names].join(', ')})`,
    )
  return config
}

/** One line per wrong key: its path in the file and what is wrong (each unknown key on a line of its own). */
function formatIssue(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => `  ${[...issue.path, key].join('.')}: unknown key`)
  const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)'
  return [`  ${path}: ${issue.message}`]
}

function hasEmptyNetworks(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || !('networks' in raw)) return false
  return Array.isArray(raw.networks) && raw.networks.length === 0
}
