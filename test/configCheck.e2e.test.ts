import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parse } from 'yaml'
import { bin } from './helpers/gatewayProcess.ts'

type Ran = { code: number; stdout: string; stderr: string }

/** A network entry in YAML flow style. */
const network = (name: string, chainId: number) =>
  `{ name: ${name}, chainId: ${chainId}, upstreams: [{ url: "http://${name}.example" }] }`

/** `tollgate ARGS` as a user runs it, with TOLLGATE_* variables only from `env`. */
function tollgate(args: string[], env: Record<string, string> = {}, cwd = process.cwd()): Promise<Ran> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TOLLGATE_')),
  )
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env: { ...base, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code) : 0, stdout, stderr })
    })
  })
}

describe('tollgate config check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-check-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  const secrets = {
    admin: 'admin-token-0123456789',
    metrics: 'metrics-token-0123456789',
    database: 'database-password',
    redis: 'redis-password',
    vendor: 'VENDORKEY0123',
    partner: 'partner-api-key',
  }
  const configFile = join(dir, 'tollgate.yaml')
  writeFileSync(
    configFile,
    `admin: { token: ${secrets.admin} }
metrics: { token: ${secrets.metrics} }
storage: { postgres: "postgres://tollgate:${secrets.database}@db:5432/tollgate?schema=tg&sslmode=require" }
server: { port: 9545 }
networks:
  - name: mainnet
    chainId: 1
    maxLogsResults: 5000
    upstreams:
      - { url: http://10.0.0.5:8545, ws: ws://10.0.0.5:8546, name: geth-1 }
      - { url: "https://user:pass@node.vendor.example/v3/${secrets.vendor}" }
    partners:
      - { url: "https://partner.example/rpc?apikey=${secrets.partner}" }
`,
  )

  it('a valid file: exit 0, the effective configuration as YAML with defaults filled in and no secret', async () => {
    const ran = await tollgate(['config', 'check', '--config', configFile], {
      TOLLGATE_REDIS_URL: `redis://default:${secrets.redis}@cache:6379`,
    })
    assert.equal(ran.code, 0, ran.stderr)
    assert.equal(ran.stderr, '')
    for (const secret of Object.values(secrets)) assert.ok(!ran.stdout.includes(secret), `${secret} printed`)
    assert.match(ran.stdout, new RegExp(`^# tollgate's effective configuration \\(${configFile}\\)`))
    const effective = parse(ran.stdout)
    // what the file sets, and the defaults around it
    assert.equal(effective.server.port, 9545)
    assert.equal(effective.server.host, '127.0.0.1')
    assert.equal(effective.upstreams.timeoutMs, 30_000)
    assert.equal(effective.plans.core.dailyCredits, 3_000_000)
    assert.equal(effective.metering.spoolDir, 'data/spool')
    assert.equal(effective.devnet, undefined)
    // secrets redacted, the rest of each URL kept as logs show it
    assert.equal(effective.admin.token, '(redacted)')
    assert.equal(effective.metrics.token, '(redacted)')
    assert.equal(
      effective.storage.postgres,
      'postgres://tollgate:(redacted)@db:5432/tollgate?schema=tg&sslmode=require',
    )
    assert.deepEqual(effective.redis, {
      url: 'redis://default:(redacted)@cache:6379',
      keyPrefix: 'tollgate:',
    })
    assert.deepEqual(effective.networks, [
      {
        name: 'mainnet',
        chainId: 1,
        maxLogsResults: 5000,
        upstreams: [
          { url: 'http://10.0.0.5:8545', ws: 'ws://10.0.0.5:8546', name: 'geth-1' },
          { url: 'https://…@node.vendor.example/…' },
        ],
        partners: [{ url: 'https://…@partner.example/…' }],
        hosts: [],
        maxLogsBlockRange: 10_000,
      },
    ])
  })

  it('says which network the un-prefixed URLs serve, and by which rule; defaultNetwork filled in', async () => {
    const ran = await tollgate(['config', 'check', '--config', configFile])
    assert.equal(ran.code, 0, ran.stderr)
    assert.equal(
      ran.stdout.split('\n')[1],
      '# the un-prefixed URLs (/v3/KEY, /ws/v3/KEY, and a Host header no network claims) serve network mainnet (the first network listed, as defaultNetwork is unset); a reload moves them only to a network named in defaultNetwork',
    )
    assert.equal(parse(ran.stdout).defaultNetwork, 'mainnet')
    const embedded = await tollgate(['config', 'check'], {}, dir)
    assert.match(
      embedded.stdout.split('\n')[1] ?? '',
      /serve network devnet \(the embedded devnet, as defaultNetwork is unset\)/,
    )
    const named = join(dir, 'named.yaml')
    writeFileSync(
      named,
      `defaultNetwork: base\nnetworks: [${network('mainnet', 1)}, ${network('base', 8453)}]\n`,
    )
    const fromKey = await tollgate(['config', 'check', '--config', named])
    assert.match(fromKey.stdout.split('\n')[1] ?? '', /serve network base \(defaultNetwork\)/)
    const off = join(dir, 'off.yaml')
    writeFileSync(off, `defaultNetwork: false\nnetworks: [${network('mainnet', 1)}]\n`)
    const none = await tollgate(['config', 'check', '--config', off])
    assert.match(none.stdout.split('\n')[1] ?? '', /serve no network \(defaultNetwork: false\)/)
    assert.equal(parse(none.stdout).defaultNetwork, false)
  })

  it('--against the running file: what a reload would take, and a move of the un-prefixed URLs refused (exit 2) unless named', async () => {
    const running = join(dir, 'running.yaml')
    writeFileSync(running, `networks: [${network('mainnet', 1)}]\n`)
    const added = join(dir, 'added.yaml')
    writeFileSync(
      added,
      `server: { port: 9000 }\nnetworks: [${network('mainnet', 1)}, ${network('base', 8453)}]\n`,
    )
    const ok = await tollgate(['config', 'check', '--config', added, '--against', running])
    assert.equal(ok.code, 0, ok.stderr)
    assert.equal(
      ok.stdout.split('\n')[2],
      `# a reload from ${running} takes networks; keeps the running value of server.port (a restart takes them)`,
    )
    assert.match(ok.stdout.split('\n')[1] ?? '', /serve network mainnet/)

    const first = join(dir, 'first.yaml')
    writeFileSync(first, `networks: [${network('base', 8453)}, ${network('mainnet', 1)}]\n`)
    const refused = await tollgate(['config', 'check', '--config', first, '--against', running])
    assert.equal(refused.code, 2)
    assert.equal(refused.stdout, '')
    assert.equal(
      refused.stderr,
      `a reload from ${running} to this file would be refused: defaultNetwork: the un-prefixed URLs (/v3/KEY, /ws/v3/KEY) serve network 'mainnet'; this file would move them to 'base' (the first network listed, as defaultNetwork is unset). Set defaultNetwork: mainnet to keep them, or defaultNetwork: base to move them\n`,
    )

    const moved = join(dir, 'moved.yaml')
    writeFileSync(moved, `defaultNetwork: base\nnetworks: [${network('base', 8453)}]\n`)
    const named = await tollgate(['config', 'check', '--config', moved, '--against', running])
    assert.equal(named.code, 0, named.stderr)
    assert.deepEqual(named.stdout.split('\n').slice(2, 4), [
      `# a reload from ${running} takes networks, defaultNetwork`,
      '# and moves the un-prefixed URLs from mainnet to base, as defaultNetwork says',
    ])
    const same = await tollgate(['config', 'check', '--config', running, '--against', running])
    assert.equal(same.stdout.split('\n')[2], `# a reload from ${running} changes no live key`)
  })

  it('an invalid file: exit 2, each wrong key on stderr with its path and what is wrong, nothing on stdout', async () => {
    const bad = join(dir, 'bad.yaml')
    writeFileSync(
      bad,
      `server: { port: 99999, hots: x }
storage: { postgres: "mysql://db/tollgate" }
networks:
  - { name: Main, chainId: 1, upstreams: [{ url: "ftp://node" }] }
`,
    )
    const ran = await tollgate(['config', 'check', '--config', bad])
    assert.equal(ran.code, 2)
    assert.equal(ran.stdout, '')
    assert.equal(
      ran.stderr,
      [
        `${bad}: invalid config`,
        '  server.port: Too big: expected number to be <=65535',
        '  server.hots: unknown key',
        '  storage.postgres: expected a postgres:// URL',
        '  networks.0.name: expected lowercase letters, digits and dashes',
        '  networks.0.upstreams.0.url: expected an http(s) URL',
        '',
      ].join('\n'),
    )
    const missing = await tollgate(['config', 'check', '--config', join(dir, 'missing.yaml')])
    assert.deepEqual(missing, {
      code: 2,
      stdout: '',
      stderr: `${join(dir, 'missing.yaml')}: cannot read the config file (ENOENT)\n`,
    })
  })

  it('a tracing environment tollgate cannot honour (grpc, an unknown sampler): exit 2, named on stderr', async () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317' }
    const ran = await tollgate(['config', 'check', '--config', configFile], {
      ...on,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
    })
    assert.equal(ran.code, 2)
    assert.equal(ran.stdout, '')
    assert.match(
      ran.stderr,
      /OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not offered: use http\/protobuf or http\/json/,
    )
    assert.match(ran.stderr, /OTEL_TRACES_SAMPLER: jaeger_remote is not one tollgate offers/)
    // tracing off: a cluster's OTEL_* defaults are not looked at
    const off = await tollgate(['config', 'check', '--config', configFile], {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    })
    assert.equal(off.code, 0, off.stderr)
  })

  it('without --config: $TOLLGATE_CONFIG, else the embedded devnet on SQLite', async () => {
    const fromEnv = await tollgate(['config', 'check'], { TOLLGATE_CONFIG: configFile })
    assert.equal(fromEnv.code, 0, fromEnv.stderr)
    assert.equal(parse(fromEnv.stdout).server.port, 9545)
    const embedded = await tollgate(['config', 'check'])
    assert.equal(embedded.code, 0, embedded.stderr)
    assert.match(
      embedded.stdout,
      /^# tollgate's effective configuration \(no config file: the embedded devnet\)/,
    )
    const effective = parse(embedded.stdout)
    assert.deepEqual(effective.devnet, { blockTimeSeconds: 2, seed: true })
    assert.deepEqual(effective.storage, { sqlite: './data/tollgate.db' })
    assert.deepEqual(effective.networks, [])
    assert.equal(effective.admin.token, undefined)
  })
})

describe('tollgate --version', () => {
  it("prints package.json's version; --help names it", async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
    for (const flag of ['--version', '-v'])
      assert.deepEqual(await tollgate([flag]), { code: 0, stdout: `${version}\n`, stderr: '' })
    const help = await tollgate(['--help'])
    assert.match(help.stdout, /-v, --version +print the version/)
    assert.match(help.stdout, /config +check a config file before deploying it/)
    assert.match((await tollgate(['config', 'check', '--help'])).stdout, /--config <file>/)
  })
})
