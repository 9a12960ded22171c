import type { Command } from 'commander'
import type { Config } from '../config/configSchema.ts'
import { configOption, loadConfigOrExit } from './configOption.ts'
import { redactConfig } from './redactConfig.ts'

export function addConfigCommand(program: Command): void {
  const config = program.command('config').description('check a config file before deploying it')
  config
    .command('check')
    .description(
      'validate the config as start reads it and print the effective configuration as YAML, defaults filled in and secrets redacted (invalid: each wrong key on stderr, exit code 2)',
    )
    .addOption(configOption())
    .action(async (options: { config?: string }) => {
      const file = options.config ?? process.env.TOLLGATE_CONFIG
      const loaded = await loadConfigOrExit(options.config)
      // loaded on use: `--help` needs none of it
      const [{ stringify }, { logsLimitDefaults }, { getSpoolDir }] = await Promise.all([
        import('yaml'),
        import('../config/configSchema.ts'),
        import('../metering/getSpoolDir.ts'),
      ])
      const effective: Config = {
        ...loaded,
        networks: loaded.networks.map((network) => ({
          ...network,
          maxLogsBlockRange: network.maxLogsBlockRange ?? logsLimitDefaults.maxLogsBlockRange,
          maxLogsResults: network.maxLogsResults ?? logsLimitDefaults.maxLogsResults,
        })),
        metering: { ...loaded.metering, spoolDir: getSpoolDir(loaded) },
      }
      const source = file === undefined ? 'no config file: the embedded devnet' : file
      process.stdout.write(
        `# tollgate's effective configuration (${source}): defaults filled in, secrets redacted\n${stringify(redactConfig(effective))}`,
      )
    })
}
