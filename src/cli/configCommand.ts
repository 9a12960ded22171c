import process from 'node:process'
import type { Command } from 'commander'
import type { Config } from '../config/configSchema.ts'
import type { ReloadPlan } from '../config/planReload.ts'
import { configOption, loadConfigOrExit } from './configOption.ts'

type CheckOptions = { config?: string; against?: string }

export function addConfigCommand(program: Command): void {
  const config = program.command('config').description('check a config file before deploying it')
  config
    .command('check')
    .description(
      'validate the config as start reads it and print the effective configuration as YAML, defaults filled in and secrets redacted, and which network the un-prefixed URLs serve (invalid: each wrong key on stderr, exit code 2)',
    )
    .addOption(configOption())
    .option(
      '--against <file>',
      'the file the running gateway runs on: also say what a reload (SIGHUP) from it to this one would do (refused: on stderr, exit code 2)',
    )
    .action(async (options: CheckOptions) => {
      const file = options.config ?? process.env.TOLLGATE_CONFIG
      const loaded = await loadConfigOrExit(options.config)
      // loaded on use: `--help` needs none of it
      const [{ redactedYaml }, { logsLimitDefaults }, { getSpoolDir }, { getDefaultNetwork }] =
        await Promise.all([
          import('./redactConfig.ts'),
          import('../config/configSchema.ts'),
          import('../metering/getSpoolDir.ts'),
          import('../config/getDefaultNetwork.ts'),
        ])
      const served = getDefaultNetwork(loaded)
      const notes = [`# ${servedNote(loaded, served)}`]
      if (options.against !== undefined) notes.push(...(await reloadNotes(options.against, loaded)))
      const effective: Config = {
        ...loaded,
        networks: loaded.networks.map((network) => ({
          ...network,
          maxLogsBlockRange: network.maxLogsBlockRange ?? logsLimitDefaults.maxLogsBlockRange,
          maxLogsResults: network.maxLogsResults ?? logsLimitDefaults.maxLogsResults,
        })),
        defaultNetwork: served ?? false,
        metering: { ...loaded.metering, spoolDir: getSpoolDir(loaded) },
      }
      const source = file === undefined ? 'no config file: the embedded devnet' : file
      process.stdout.write(
        `# tollgate's effective configuration (${source}): defaults filled in, secrets redacted\n${notes.join('\n')}\n${redactedYaml(effective)}`,
      )
    })
}

/** Which network the un-prefixed URLs serve, and by which rule (getDefaultNetwork). */
function servedNote(config: Config, served: string | undefined): string {
  const urls = 'the un-prefixed URLs (/v3/KEY, /ws/v3/KEY, and a Host header no network claims)'
  if (served === undefined) return `${urls} serve no network (defaultNetwork: false)`
  const rule =
    config.defaultNetwork !== undefined
      ? 'defaultNetwork'
      : config.devnet
        ? 'the embedded devnet, as defaultNetwork is unset'
        : 'the first network listed, as defaultNetwork is unset'
  return `${urls} serve network ${served} (${rule}); a reload moves them only to a network named in defaultNetwork`
}

/**
 * What a reload from the config in `runningFile` to `next` would do, as comment lines; a reload it
 * would refuse (planReload's ConfigError) ends the process with exit code 2, the reason on stderr.
 */
async function reloadNotes(runningFile: string, next: Config): Promise<string[]> {
  const running = await loadConfigOrExit(runningFile)
  const [{ planReload }, { ConfigError }] = await Promise.all([
    import('../config/planReload.ts'),
    import('../config/loadConfig.ts'),
  ])
  let plan: ReloadPlan
  try {
    plan = planReload(running, next)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`a reload from ${runningFile} to this file would be refused: ${err.message}\n`)
    process.exit(2)
  }
  const taken = plan.changed.length > 0 ? `takes ${plan.changed.join(', ')}` : 'changes no live key'
  const refused =
    plan.refused.length > 0
      ? `; keeps the running value of ${plan.refused.join(', ')} (a restart takes them)`
      : ''
  const notes = [`# a reload from ${runningFile} ${taken}${refused}`]
  if (plan.moved)
    notes.push(
      `# and moves the un-prefixed URLs from ${plan.moved.from ?? 'no network'} to ${plan.moved.to ?? 'no network'}, as defaultNetwork says`,
    )
  return notes
}
