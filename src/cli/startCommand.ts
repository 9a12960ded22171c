import cluster from 'node:cluster'
import type { Command } from 'commander'
import type { Logger } from 'pino'
import type { App } from '../app/createApp.ts'
import type { Config } from '../config/configSchema.ts'
import type { DevnetFixtures } from '../devnet/seedDevnet.ts'
import type { BankChannel } from '../metering/createClusterBank.ts'
import { PortInUseError } from '../server/assertPortFree.ts'
import { DatabaseInUseError } from '../store/lockDatabaseFile.ts'
import { configOption, loadConfigOrExit } from './configOption.ts'

type StartOptions = { config?: string; host?: string; port?: string; workers?: string }

export function addStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'start the gateway (with no config: an embedded, seeded anvil devnet and ./data/tollgate.db)',
    )
    .addOption(configOption())
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--port <port>', 'listen port (default 8545)')
    .option('--workers <n>', 'processes serving the port, sharing credits exactly (default 1)')
    .action(async (options: StartOptions) => {
      const config = await loadConfigOrExit(options.config)
      if (options.host !== undefined) config.server.host = options.host
      if (options.port !== undefined) config.server.port = Number(options.port)
      if (options.workers !== undefined) {
        const workers = Number(options.workers)
        if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
          process.stderr.write('--workers must be a whole number from 1 to 64\n')
          process.exit(2)
        }
        config.server.workers = workers
      }
      // loaded on use: `--help` needs neither the logger nor the whole gateway
      const [{ pino }, { createApp }] = await Promise.all([import('pino'), import('../app/createApp.ts')])
      const log = pino({ level: config.log.level })
      if (config.server.workers > 1 && cluster.isPrimary) return startPrimary(config, log)
      const worker = config.server.workers > 1 ? await workerRole() : undefined
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
        return
      }
      if (!stopper.started({ stop: () => app.close(), kill: () => void app.devnet?.anvil.stop() })) return
      if (worker) {
        process.send?.({ tollgate: 'listening', url: app.url, networks: app.networks.all.map(networkLine) })
        // the primary decides when workers stop: a terminal's Ctrl-C reaches it (and it sends SIGTERM)
        process.on('SIGINT', () => {})
        process.on('SIGTERM', () => stopper.stop('SIGTERM'))
        // the primary is gone (killed): no one is left to hand out connections or credits
        process.on('disconnect', () => {
          if (!stopper.stopping()) stopper.stop('primary gone')
        })
      } else process.stdout.write(banner(app))
    })
}

/** `--workers N`: this process forks and watches the workers; they serve. */
async function startPrimary(config: Config, log: Logger): Promise<void> {
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
    return
  }
  if (!stopper.started(primary)) return
  process.stdout.write(
    bannerText({
      url: primary.url,
      networks: primary.networks,
      devnet: primary.devnet,
      workers: config.server.workers,
    }),
  )
}

/** What a stop signal stops: `stop` drains, `kill` is for a second signal. */
type Stoppable = { stop(): Promise<void>; kill(): void }

/**
 * The signals' one policy, from the first moment of start-up: the first drains and stops (during
 * start-up, as soon as the gateway has started), a second exits at once. Exiting rather than dying
 * by the signal lets an embedded devnet still starting be stopped too (startAnvil.ts).
 */
function createStopper(log: Logger, drainMessage: string) {
  let running: Stoppable | undefined
  let stopping = false
  const close = (target: Stoppable, signal: string) => {
    log.info({ signal }, drainMessage)
    target.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  return {
    stop(signal: string): void {
      if (stopping) {
        log.warn('second signal: exiting now')
        running?.kill()
        process.exit(1)
      }
      stopping = true
      if (running) close(running, signal)
      else log.info({ signal }, 'stopping once started')
    },
    stopping: () => stopping,
    /** The gateway is up: false when a signal came first (it is being stopped now). */
    started(target: Stoppable): boolean {
      running = target
      if (stopping) close(target, 'a signal during start-up')
      return !stopping
    },
  }
}

/** A worker's part, from the primary (runPrimary.ts). */
async function workerRole() {
  const { workerSpecVariable } = await import('./runPrimary.ts')
  const { createClusterBank } = await import('../metering/createClusterBank.ts')
  const spec = JSON.parse(process.env[workerSpecVariable] ?? '{}') as import('./runPrimary.ts').WorkerSpec
  return {
    devnet: spec.devnet,
    bank:
      spec.bankLeaseTtlMs === undefined
        ? undefined
        : createClusterBank({
            channel: process as unknown as BankChannel,
            leaseTtlMs: spec.bankLeaseTtlMs,
            timeoutMs: spec.bankTimeoutMs,
          }),
    indexesFees: spec.slot === 0,
  }
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

function banner(app: App): string {
  return bannerText({
    url: app.url,
    networks: app.networks.all.map(networkLine),
    devnet: app.devnet,
    workers: 1,
  })
}

type BannerView = {
  url: string
  networks: string[]
  devnet: { fixtures: DevnetFixtures | undefined; demoKey: { key: string } } | undefined
  workers: number
}

function bannerText(app: BannerView): string {
  const lines = [`tollgate is listening on ${app.url}${app.workers > 1 ? ` (${app.workers} workers)` : ''}`]
  lines.push(...app.networks)
  const devnet = app.devnet
  if (devnet) {
    const endpoint = `${app.url}/v3/${devnet.demoKey.key}`
    if (devnet.fixtures) {
      lines.push(
        `  devnet seeded: Demo contract ${devnet.fixtures.demo}, blocks to ${devnet.fixtures.loadBlocks.to}`,
      )
    }
    lines.push(
      '',
      `Demo API key: ${devnet.demoKey.key}`,
      '',
      'curl:',
      `  curl ${endpoint} -H 'content-type: application/json' \\`,
      `    -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'`,
      '',
      'viem:',
      `  import { createPublicClient, http } from 'viem'`,
      `  const client = createPublicClient({ transport: http('${endpoint}') })`,
      '  console.log(await client.getBlockNumber())',
      '',
      'WebSocket (the same JSON-RPC, plus eth_subscribe):',
      `  ${app.url.replace(/^http/, 'ws')}/ws/v3/${devnet.demoKey.key}`,
      '',
      'Ctrl-C stops the gateway and the devnet.',
    )
  }
  return `${lines.join('\n')}\n\n`
}
