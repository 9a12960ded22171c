import type { Command } from 'commander'
import type { App } from '../app/createApp.ts'
import { PortInUseError } from '../server/assertPortFree.ts'
import { DatabaseInUseError } from '../store/lockDatabaseFile.ts'
import { configOption, loadConfigOrExit } from './configOption.ts'

type StartOptions = { config?: string; host?: string; port?: string }

export function addStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'start the gateway (with no config: an embedded, seeded anvil devnet and ./data/tollgate.db)',
    )
    .addOption(configOption())
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('--port <port>', 'listen port (default 8545)')
    .action(async (options: StartOptions) => {
      const config = await loadConfigOrExit(options.config)
      if (options.host !== undefined) config.server.host = options.host
      if (options.port !== undefined) config.server.port = Number(options.port)
      // loaded on use: `--help` needs neither the logger nor the whole gateway
      const [{ pino }, { createApp }] = await Promise.all([import('pino'), import('../app/createApp.ts')])
      const log = pino({ level: config.log.level })
      let app: App
      try {
        app = await createApp(config, { log })
      } catch (err) {
        // one plain line for the operator; the stack only where the log level asks for detail
        log.debug({ err }, 'tollgate could not start')
        process.stderr.write(`${startFailure(err)}\n`)
        process.exitCode = 1
        return
      }
      process.stdout.write(banner(app))
      let stopping = false
      const stop = (signal: string) => {
        if (stopping) {
          log.warn('second signal: exiting now')
          void app.devnet?.anvil.stop()
          process.exit(1)
        }
        stopping = true
        log.info({ signal }, 'draining in-flight requests and stopping')
        app.close().then(
          () => process.exit(0),
          (err) => {
            log.error({ err }, 'shutdown failed')
            process.exit(1)
          },
        )
      }
      process.on('SIGINT', () => stop('SIGINT'))
      process.on('SIGTERM', () => stop('SIGTERM'))
    })
}

function startFailure(err: unknown): string {
  if (err instanceof PortInUseError || err instanceof DatabaseInUseError) return err.message
  const message = err instanceof Error ? err.message : String(err)
  // a listen that lost a race with another process after the check
  if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return 'the port is in use'
  return `tollgate could not start: ${message}`
}

function banner(app: App): string {
  const lines = [`tollgate is listening on ${app.url}`]
  for (const network of app.networks.all) {
    const upstreams = network.pool.members.map((member) => member.upstream.label).join(', ')
    lines.push(`  network ${network.name} (chain ${network.chainId}) -> ${upstreams}`)
  }
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
