import cluster from 'node:cluster'
import process from 'node:process'
import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import { ConfigError } from '../config/loadConfig.ts'
import type { DevnetFixtures } from '../devnet/seedDevnet.ts'
import type { DevnetEndpoint } from '../devnet/startDevnet.ts'
import { PortInUseError } from '../server/assertPortFree.ts'
import { DatabaseInUseError } from '../store/lockDatabaseFile.ts'
import { type App, createApp } from './createApp.ts'
import { createStopper } from './createStopper.ts'
import { type ListeningMessage, type ReloadMessage, readWorkerRole, type WorkerSpec } from './workerRole.ts'

/** A gateway that is up, as its banner shows it. */
export type StartedGateway = {
  url: string
  /** One line per network: its name, chain and upstreams. */
  networks: string[]
  devnet: StartedDevnet | undefined
  workers: number
}

/** The embedded devnet as the banner shows it: its seed, the demo key, and where its node answers. */
export type StartedDevnet = {
  fixtures: DevnetFixtures | undefined
  demoKey: { key: string }
  node: DevnetEndpoint
}

/**
 * Reads the config file again, as at start (the command line's options applied): throws its
 * ConfigError when the file is invalid. Undefined with no file (the embedded devnet).
 */
export type ConfigReader = (() => Config) | undefined

/**
 * `tollgate start` once its options are read: one process serving the port, or with `--workers N`
 * the primary that forks and watches N workers (runPrimary.ts), or one of those workers. Stop
 * signals are handled from the first moment (createStopper). Resolves with what the banner shows
 * once the gateway is up, in the process that shows it (not a worker); undefined when it did not
 * start (the reason is on stderr, the exit code 1) or a signal came first.
 */
export async function startGateway(
  config: Config,
  log: Logger,
  readConfig: ConfigReader = undefined,
  workerSpec: WorkerSpec | undefined = undefined,
): Promise<StartedGateway | undefined> {
  if (config.server.workers > 1 && cluster.isPrimary) return startPrimary(config, log, readConfig)
  if (config.server.workers > 1 && !workerSpec) {
    // a worker of another cluster supervisor (PM2's cluster mode): that supervisor runs the copies
    log.warn(
      `server.workers ${config.server.workers} ignored: this process is a worker of another cluster supervisor, and serves as one process`,
    )
  }
  const worker = workerSpec && (await readWorkerRole(workerSpec))
  const stopper = createStopper(log, 'draining in-flight requests and stopping')
  let app: App | undefined
  if (!worker) {
    // from the start: a Ctrl-C while the devnet is seeded must not leave it running
    process.on('SIGINT', () => stopper.stop('SIGINT'))
    process.on('SIGTERM', () => stopper.stop('SIGTERM'))
    process.on('SIGHUP', () => {
      if (!app) return log.warn('SIGHUP during start-up: ignored (send it again once the gateway is up)')
      const up = app
      readForReload(readConfig, log, {
        apply: (next) => up.reloader.reload(next),
        refuse: () => up.reloader.refused(),
      })
    })
  } else {
    // the primary reads the file and tells every worker (a terminal's hang-up reaches them too); it
    // tells a worker only once it listens, and then of any reload it missed while starting
    process.on('SIGHUP', () => {})
    process.on('message', (message: ReloadMessage | undefined) => {
      if (message?.tollgate !== 'reload' || !app) return
      if ('invalid' in message) app.reloader.refused()
      else void app.reloader.reload(message.config).catch((err) => reloadFailed(log, err))
    })
  }
  try {
    app = await createApp(config, worker ? { log, worker } : { log })
  } catch (err) {
    // one plain line for the operator; the stack only where the log level asks for detail
    log.debug({ err }, 'tollgate could not start')
    process.stderr.write(`${startFailure(err)}\n`)
    process.exitCode = 1
    // a worker's channel to the primary would keep it running
    if (worker) process.exit(1)
    return undefined
  }
  const started = app
  if (!stopper.started({ stop: () => started.close(), kill: () => void started.devnet?.anvil.stop() }))
    return undefined
  const networks = app.networks.all.map(networkLine)
  if (!worker) return { url: app.url, networks, devnet: app.devnet && startedDevnet(app.devnet), workers: 1 }
  process.send?.({ tollgate: 'listening', url: app.url, networks } satisfies ListeningMessage)
  // the primary decides when workers stop: a terminal's Ctrl-C reaches it (and it sends SIGTERM)
  process.on('SIGINT', () => {})
  process.on('SIGTERM', () => stopper.stop('SIGTERM'))
  // the primary is gone (killed): no one is left to hand out connections or credits
  process.on('disconnect', () => {
    if (!stopper.stopping()) stopper.stop('primary gone')
  })
  return undefined
}

/** `--workers N`: this process forks and watches the workers; they serve. */
async function startPrimary(
  config: Config,
  log: Logger,
  readConfig: ConfigReader,
): Promise<StartedGateway | undefined> {
  const { runPrimary, WorkerStartError } = await import('./runPrimary.ts')
  let primary: Awaited<ReturnType<typeof runPrimary>>
  const stopper = createStopper(log, 'stopping the workers (they drain in-flight requests)')
  // from the start: a Ctrl-C while the devnet is seeded must not leave it running
  process.on('SIGINT', () => stopper.stop('SIGINT'))
  process.on('SIGTERM', () => stopper.stop('SIGTERM'))
  let up: Awaited<ReturnType<typeof runPrimary>> | undefined
  process.on('SIGHUP', () => {
    if (!up) return log.warn('SIGHUP during start-up: ignored (send it again once the gateway is up)')
    const running = up
    readForReload(readConfig, log, {
      apply: (next) => running.reload(next),
      refuse: () => running.refuseReload(),
    })
  })
  try {
    primary = await runPrimary(config, log)
    up = primary
  } catch (err) {
    log.debug({ err }, 'tollgate could not start')
    // a worker that failed has printed its reason already
    if (!(err instanceof WorkerStartError)) process.stderr.write(`${startFailure(err)}\n`)
    process.exitCode = 1
    return undefined
  }
  if (!stopper.started(primary)) return undefined
  return {
    url: primary.url,
    networks: primary.networks,
    devnet: primary.devnet,
    workers: config.server.workers,
  }
}

/**
 * SIGHUP: the file read again and handed on, or refused whole (the running config stays): when it is
 * invalid, or when applying it throws a ConfigError (it would move the un-prefixed URLs: planReload).
 */
function readForReload(
  readConfig: ConfigReader,
  log: Logger,
  on: { apply(next: Config): unknown; refuse(): void },
): void {
  if (!readConfig) {
    log.info('SIGHUP: no config file (the embedded devnet): nothing to reload')
    return
  }
  const refuse = (err: unknown) => {
    log.error(`config reload refused, the running config stays: ${(err as Error).message}`)
    on.refuse()
  }
  let next: Config
  try {
    next = readConfig()
  } catch (err) {
    refuse(err)
    return
  }
  Promise.resolve()
    .then(() => on.apply(next))
    .catch((err: unknown) => (err instanceof ConfigError ? refuse(err) : reloadFailed(log, err)))
}

function reloadFailed(log: Logger, err: unknown): void {
  log.error({ err }, 'config reload failed: the running config stays')
}

function startedDevnet({ anvil, fixtures, demoKey }: NonNullable<App['devnet']>): StartedDevnet {
  return { fixtures, demoKey, node: { url: anvil.url, wsUrl: anvil.wsUrl, chainId: anvil.chainId } }
}

function networkLine(network: App['networks']['all'][number]): string {
  const upstreams = network.pool.members.map((member) => member.upstream.label).join(', ')
  return `  network ${network.name} (chain ${network.chainId}) -> ${upstreams}`
}

function startFailure(err: unknown): string {
  if (err instanceof PortInUseError || err instanceof DatabaseInUseError) return err.message
  const message = err instanceof Error ? err.message : String(err)
  // a listen that lost a race with another process after the check
  if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return 'the port is in use'
  return `tollgate could not start: ${message}`
}
