import process from 'node:process'
import { Option } from 'commander'
import type { Config } from '../config/configSchema.ts'

export const configOption = () =>
  new Option('-c, --config <file>', 'YAML config file (default: $TOLLGATE_CONFIG, else the embedded devnet)')

/**
 * The config from --config or TOLLGATE_CONFIG; a config error ends the process with its message.
 * Loaded on use, so that `--help` never loads the schema.
 */
export async function loadConfigOrExit(file: string | undefined): Promise<Config> {
  const { ConfigError, loadConfig } = await import('../config/loadConfig.ts')
  try {
    return loadConfig(file ?? process.env.TOLLGATE_CONFIG)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exit(2)
  }
}
