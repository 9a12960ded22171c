import { randomBytes } from 'node:crypto'
import process from 'node:process'
import type { Command } from 'commander'
import type { StartedGateway } from '../app/startGateway.ts'
import type { Config } from '../config/configSchema.ts'
import { devnetNetworkName } from '../config/devnetNetworkName.ts'
import { getDefaultNetwork } from '../config/getDefaultNetwork.ts'
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
      if (options.workers !== undefined) {
        const workers = Number(options.workers)
        if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
          process.stderr.write('--workers must be a whole number from 1 to 64\n')
          process.exit(2)
        }
      }
      // the command line's options win over the file, at start and at each reload (SIGHUP)
      const withOptions = (config: Config): Config => {
        if (options.host !== undefined) config.server.host = options.host
        if (options.port !== undefined) config.server.port = Number(options.port)
        if (options.workers !== undefined) config.server.workers = Number(options.workers)
        return config
      }
      // loaded on use: `--help` needs neither the logger nor the whole gateway
      const [{ pino }, { startGateway }, { loadConfig }, { readWorkerSpec, NoWorkerSpecError }] =
        await Promise.all([
          import('pino'),
          import('../app/startGateway.ts'),
          import('../config/loadConfig.ts'),
          import('../app/workerRole.ts'),
        ])
      // a worker of --workers runs on the primary's config, never on the file as it reads now
      const workerSpec = await readWorkerSpec().catch((err: unknown) => {
        if (!(err instanceof NoWorkerSpecError)) throw err
        // its channel to the primary would keep it waiting: a worker that cannot start says so and ends
        process.stderr.write(`tollgate could not start: ${err.message}\n`)
        process.exit(1)
      })
      const config = workerSpec?.config ?? withOptions(await loadConfigOrExit(options.config))
      const file = options.config ?? process.env.TOLLGATE_CONFIG
      const readConfig = file === undefined ? undefined : () => withOptions(loadConfig(file))
      const signInToken = workerSpec || file !== undefined ? undefined : withDemoAdminToken(config)
      const started = await startGateway(config, pino({ level: config.log.level }), readConfig, workerSpec)
      if (started)
        process.stdout.write(
          bannerText(started, config, { on: config.admin.token !== undefined, signInToken }),
        )
    })
}

/**
 * The embedded default (no config file) without an admin token: one made for this start, so that
 * the dashboard (and /admin) are on and the banner can print a link that signs a browser in. It is
 * never written anywhere but the banner; the workers of --workers get it with the config.
 */
function withDemoAdminToken(config: Config): string | undefined {
  if (config.admin.token !== undefined) return undefined
  config.admin.token = randomBytes(24).toString('base64url')
  return config.admin.token
}

type BannerDashboard = { on: boolean; signInToken: string | undefined }

function bannerText(app: StartedGateway, config: Config, dashboard: BannerDashboard): string {
  const lines = [`tollgate is listening on ${app.url}${app.workers > 1 ? ` (${app.workers} workers)` : ''}`]
  lines.push(...app.networks, ...networkUrlLines(app, config))
  const devnet = app.devnet
  if (devnet?.fixtures) {
    lines.push(
      `  devnet seeded: Demo contract ${devnet.fixtures.demo}, blocks to ${devnet.fixtures.loadBlocks.to}`,
    )
  }
  if (devnet) {
    // the node itself: for what the gateway never forwards (anvil_* cheat codes, eth_sendTransaction)
    lines.push(
      `  devnet node: ${devnet.node.url} (anvil, chain id ${devnet.node.chainId}), without the gateway: no key, anvil_* methods too`,
    )
  }
  if (dashboard.signInToken === undefined) {
    lines.push(
      dashboard.on
        ? `  dashboard: ${app.url}/dashboard (sign in with the admin token)`
        : '  dashboard: off (admin.token or TOLLGATE_ADMIN_TOKEN turns it and /admin on)',
    )
  }
  if (devnet) lines.push('', ...devnetSnippets(app.url, devnet.demoKey.key, dashboard.signInToken))
  return `${lines.join('\n')}\n\n`
}

/**
 * With more than one network, each network's URLs, and the network the un-prefixed ones serve
 * (getDefaultNetwork). With one network, its un-prefixed URLs are all a client needs: nothing is added.
 */
function networkUrlLines(app: StartedGateway, config: Config): string[] {
  const names = [
    ...config.networks.map((network) => network.name),
    ...(config.devnet ? [devnetNetworkName] : []),
  ]
  if (names.length < 2) return []
  const served = getDefaultNetwork(config)
  const ws = app.url.replace(/^http/, 'ws')
  const row = (prefix: string, name: string) => ({
    http: `${app.url}${prefix}/v3/<KEY>`,
    ws: `${ws}${prefix}/ws/v3/<KEY>`,
    name,
  })
  const rows = [
    ...(served === undefined ? [] : [row('', served)]),
    ...names.map((name) => row(`/${name}`, name)),
  ]
  const httpWidth = Math.max(...rows.map((each) => each.http.length))
  const wsWidth = Math.max(...rows.map((each) => each.ws.length))
  return [
    served === undefined
      ? '  URLs (none un-prefixed: defaultNetwork is false):'
      : `  URLs (the un-prefixed ones serve network ${served}):`,
    ...rows.map((each) => `    ${each.http.padEnd(httpWidth)}  ${each.ws.padEnd(wsWidth)}  -> ${each.name}`),
  ]
}

/** The demo key, the dashboard's sign-in link, and snippets to paste. */
function devnetSnippets(url: string, demoKey: string, signInToken: string | undefined): string[] {
  const endpoint = `${url}/v3/${demoKey}`
  return [
    `Demo API key: ${demoKey}`,
    '',
    ...(signInToken === undefined
      ? []
      : [
          'Dashboard (the link signs your browser in; a new link at each start):',
          `  ${url}/dashboard?token=${signInToken}`,
          '',
        ]),
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
    `  ${url.replace(/^http/, 'ws')}/ws/v3/${demoKey}`,
    '',
    'Ctrl-C stops the gateway and the devnet.',
  ]
}
