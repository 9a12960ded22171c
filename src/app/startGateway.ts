import cluster from 'node:cluster'
import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import type { DevnetFixtures } from '../devnet/seedDevnet.ts'
import type { DevnetEndpoint } from '../devnet/startDevnet.ts'
import { PortInUseError } from '../server/assertPortFree.ts'
import { DatabaseInUseError } from '../store/lockDatabaseFile.ts'
import { type App, createApp } from './createApp.ts'
import { createStopper } from './createStopper.ts'
import { type ListeningMessage, readWorkerRole } from './workerRole.ts'

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
 * `tollgate start` once its options are read: one process serving the port, or with `--workers N`
 * the primary that forks and watches N workers (runPrimary.ts), or one of those workers. Stop
 * signals are handled from the first moment (createStopper). Resolves with what the banner shows
 * once the gateway is up, in the process that shows it (not a worker); undefined when it did not
 * start (the reason is on stderr, the exit code 1) or a signal came first.
 */
export async function startGateway(config: Config, log: Logger): Promise<StartedGateway | undefined> {
  if (config.server.workers > 1 && cluster.isPrimary) return startPrimary(config, log)
  const worker = config.server.workers > 1 ? await readWorkerRole() : undefined
  const stopper = createStopper(log, 'draining in-flight requests and stopping')
  if (!worker) {
    // from the start: a Ctrl-C while the devnet is seeded must not leave it running
    process.on('SIGINT', () => stopper.stop('SIGINT'))
    process.on('SIGTERM', () => stopper.stop('SIGTERM'))
  }
  let app: App
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
  if (!stopper.started({ stop: () => app.close(), kill: () => void app.devnet?.anvil.stop() }))
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
async function startPrimary(config: Config, log: Logger): Promise<StartedGateway | undefined> {
  const { runPrimary, WorkerStartError } = await import('./runPrimary.ts')
  let primary: Awaited<ReturnType<typeof runPrimary>>
  const stopper = createStopper(log, 'stopping the workers (they drain in-flight requests)')
  // from the start: a Ctrl-C while the devnet is seeded must not leave it running
  process.on('SIGINT', () => stopper.stop('SIGINT'))
  process.on('SIGTERM', () => stopper.stop('SIGTERM'))
  try {
    primary = await runPrimary(config, log)
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
