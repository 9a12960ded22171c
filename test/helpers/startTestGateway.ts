import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Logger, pino } from 'pino'
import { stringify } from 'yaml'
import { type App, createApp } from '../../src/app/createApp.ts'
import type { CreateKeyOptions } from '../../src/auth/keyAdmin.ts'
import { loadConfig } from '../../src/config/loadConfig.ts'
import type { Clock } from '../../src/metering/clock.ts'
import { createTestSchema } from './createTestSchema.ts'
import { testServers } from './testServers.ts'

export type TestGateway = {
  app: App
  url: string
  key: string
  /** `${url}/v3/${key}` */
  endpoint: string
  configFile: string
  dir: string
  /** Closes the app and starts a new one from the same config and database (`between` runs in between). */
  restart(between?: () => void): Promise<void>
  close(): Promise<void>
}

export type TestGatewayOptions = {
  /** Upstream URLs of the one network (named `devnet`, chain 31337 unless `networks` is given). */
  upstreams?: string[]
  /** Raw config fragments merged over the defaults below. */
  config?: Record<string, unknown>
  /** The test key; by default a custom plan too large to limit anything. */
  key?: CreateKeyOptions
  clock?: Clock
  log?: Logger
}

export const unlimitedKey: CreateKeyOptions = {
  plan: 'custom',
  name: 'test',
  dailyCredits: 1_000_000_000_000,
  creditsPerSecond: 1_000_000_000,
}

/**
 * Boots the whole gateway from a YAML config file in a temp dir, on a free port, with one key. With
 * TOLLGATE_TEST_STORAGE=postgres, a gateway whose config names no storage gets a Postgres schema of
 * its own (dropped on close) instead of an SQLite file: the e2e tests then run on Postgres.
 */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-'))
  const schema =
    testServers.gatewaysOnPostgres && options.config?.storage === undefined
      ? await createTestSchema()
      : undefined
  const config = {
    server: { host: '127.0.0.1', port: 0 },
    storage: schema ? { postgres: schema.url } : { sqlite: join(dir, 'tollgate.db') },
    networks: [
      { name: 'devnet', chainId: 31337, upstreams: (options.upstreams ?? []).map((url) => ({ url })) },
    ],
    log: { level: 'silent' },
    // the gas indexer polls upstreams in the background; tests that want it turn it on
    gas: { enabled: false },
    ...options.config,
  }
  const configFile = join(dir, 'tollgate.yaml')
  writeFileSync(configFile, stringify(config))
  const boot = () =>
    createApp(loadConfig(configFile), {
      log: options.log ?? pino({ level: 'silent' }),
      ...(options.clock ? { clock: options.clock } : {}),
    })
  const app = await boot()
  const {
    key: { key },
  } = await app.keyAdmin.create(options.key ?? unlimitedKey)
  await app.keys.refresh()
  const gateway: TestGateway = {
    app,
    url: app.url,
    key,
    endpoint: `${app.url}/v3/${key}`,
    configFile,
    dir,
    async restart(between) {
      await gateway.app.close()
      between?.()
      gateway.app = await boot()
      gateway.url = gateway.app.url
      gateway.endpoint = `${gateway.url}/v3/${key}`
    },
    async close() {
      await gateway.app.close()
      await schema?.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return gateway
}
