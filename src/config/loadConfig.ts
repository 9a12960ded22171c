import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import type { z } from 'zod'
import { type Config, configSchema } from './configSchema.ts'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Reads and validates the config file; with no file, the embedded defaults (devnet + SQLite).
 * Errors name the file, the path inside it and what was expected.
 */
export function loadConfig(file: string | undefined): Config {
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
  if (!result.success) throw new ConfigError(formatIssues(result.error.issues, source))
  const config = result.data
  const names = new Set<string>()
  for (const network of config.networks) {
    if (names.has(network.name))
      throw new ConfigError(`${source}: networks: duplicate network name '${network.name}'`)
    names.add(network.name)
  }
  if (config.networks.length === 0 && config.devnet === undefined)
    config.devnet = { blockTimeSeconds: 2, seed: true }
  return config
}

function formatIssues(issues: z.core.$ZodIssue[], source: string): string {
  const lines = issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)'
    return `  ${path}: ${issue.message}`
  })
  return `${source}: invalid config\n${lines.join('\n')}`
}
