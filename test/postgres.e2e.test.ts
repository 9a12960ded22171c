import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTcpProxy, type TcpProxy } from './helpers/startTcpProxy.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { toPostgresAddress } from './helpers/testServers.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** Runs the compiled `tollgate` (npm run build) as a user would; only `env` sets the database URL. */
async function tollgate(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env }
  delete base.TOLLGATE_CONFIG
  delete base.TOLLGATE_POSTGRES_URL
  return run(process.execPath, [bin, ...args], { env: { ...base, ...env } })
}

/** A refused command: its exit code and what it printed. */
async function refused(args: string[], env: Record<string, string> = {}) {
  try {
    await tollgate(args, env)
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
  throw new Error(`tollgate ${args.join(' ')} succeeded`)
}

describe('tollgate on PostgreSQL: every CLI command, the gateway beside it, readiness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-postgres-'))
  let node: TestNode
  let schema: TestSchema
  let proxy: TcpProxy
  let gateway: GatewayProcess | undefined
  let configFile: string
  let config: string[]

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // not made here: the first migration creates it
    schema = await createTestSchema({ create: false })
    proxy = await startTcpProxy(schema.url)
    configFile = join(dir, 'prod.yaml')
    writeFileSync(
      configFile,
      stringify({
        storage: { postgres: schema.url },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
      }),
    )
    config = ['--config', configFile]
  })
  after(async () => {
    if (gateway) {
      gateway.child.kill('SIGTERM')
      await exited(gateway.child)
    }
    await proxy?.close()
    await schema?.drop()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('tollgate migrate brings a fresh schema up to date, once', async () => {
    const first = (await tollgate(['migrate', ...config])).stdout
    assert.equal(
      first,
      [
        'applied migration 1: accounts and keys',
        'applied migration 2: usage ledger',
        'applied migration 3: fee history',
        'applied migration 4: key change notifications',
        'applied migration 5: usage batches',
        'applied migration 6: account tokens',
        'applied migration 7: request log',
        'applied migration 8: usage alerts',
        'applied migration 9: usage per instance',
        `postgres ${toPostgresAddress(schema.url)} schema ${schema.schema} is at schema version 9`,
        '',
      ].join('\n'),
    )
    const again = JSON.parse((await tollgate(['migrate', '--json', ...config])).stdout)
    assert.deepEqual(again, {
      database: `postgres ${toPostgresAddress(schema.url)} schema ${schema.schema}`,
      applied: [],
      version: 9,
    })
  })

  it('keys create, list, show, limits, security, secret, allowlists, networks, JWT, usage, revoke: the gateway follows', async () => {
    // `tollgate start` on the same schema, reaching it through the proxy (the readiness test cuts it)
    const gatewayConfig = join(dir, 'gateway.yaml')
    writeFileSync(
      gatewayConfig,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { postgres: proxy.url },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        log: { level: 'warn' },
        gas: { enabled: false },
      }),
    )
    gateway = await startGatewayProcess(['start', '--config', gatewayConfig])

    const created = JSON.parse(
      (await tollgate(['keys', 'create', '--name', 'ci', '--account', 'acme', '--json', ...config])).stdout,
    )
    assert.match(created.key, /^[0-9a-f]{32}$/)
    assert.equal(created.account, 'acme')
    assert.equal(created.plan, 'core')
    const endpoint = `${gateway.url}/v3/${created.key}`
    // every answer to the key, to hold `tollgate usage` against
    let served = 0
    let refusals = 0
    let charged = 0
    const call = async () => {
      const response = await postJson(endpoint, rpcBody('eth_chainId'))
      if (response.status === 200) served++
      if (response.status === 401) refusals++
      charged += Number(response.headers.get('x-credits-charged') ?? 0)
      return response.status
    }
    await until(async () => (await call()) === 200, 'the new key served')

    // the core plan allows one key per account: the second is refused, exit 1, one line
    const second = await refused(['keys', 'create', '--account', 'acme', ...config])
    assert.equal(second.code, 1)
    assert.equal(second.stderr, "account 'acme' already has 1 key(s), the most its plan (core) allows\n")

    const listed = JSON.parse((await tollgate(['keys', 'list', '--json', ...config])).stdout)
    assert.deepEqual(
      listed.map((key: { key: string }) => key.key),
      [created.key],
    )
    assert.match(
      (await tollgate(['keys', 'list', ...config])).stdout,
      new RegExp(`${created.key}\\s+ci\\s+acme\\s+core\\s+\\d{4}-\\d\\d-\\d\\d\\s+active`),
    )
    assert.deepEqual(
      JSON.parse((await tollgate(['keys', 'show', created.key, '--json', ...config])).stdout),
      created,
    )

    const limited = JSON.parse(
      (await tollgate(['keys', 'set-limits', created.key, '--daily-credits', '100000', '--json', ...config]))
        .stdout,
    )
    assert.equal(limited.dailyCredits, 100_000)

    const rotated = JSON.parse(
      (await tollgate(['keys', 'rotate-secret', created.key, '--json', ...config])).stdout,
    )
    assert.match(rotated.secret, /^[0-9a-f]{32}$/)
    const secured = JSON.parse(
      (await tollgate(['keys', 'security', created.key, '--require-secret', '--json', ...config])).stdout,
    )
    assert.equal(secured.hasSecret, true)
    assert.equal(secured.requireSecret, true)
    await until(
      async () => (await call()) === 401,
      'a call without the secret refused (as an unknown key is)',
    )
    await tollgate(['keys', 'security', created.key, '--no-require-secret', ...config])

    const allowed = JSON.parse(
      (
        await tollgate([
          'keys',
          'allowlist',
          'add',
          created.key,
          'methods',
          'eth_chainId',
          'eth_blockNumber',
          '--json',
          ...config,
        ])
      ).stdout,
    )
    assert.deepEqual(allowed.allowlists.methods, ['eth_chainId', 'eth_blockNumber'])
    await tollgate(['keys', 'allowlist', 'remove', created.key, 'methods', 'eth_blockNumber', ...config])
    const allowlists = JSON.parse(
      (await tollgate(['keys', 'allowlist', 'list', created.key, '--json', ...config])).stdout,
    )
    assert.deepEqual(allowlists.allowlists.methods, ['eth_chainId'])

    const networks = JSON.parse(
      (await tollgate(['keys', 'networks', created.key, '--set', 'devnet', '--json', ...config])).stdout,
    )
    assert.deepEqual(networks, { key: created.key, networks: ['devnet'], all: false })

    const pemFile = join(dir, 'jwt.pem')
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    writeFileSync(pemFile, publicKey.export({ type: 'spki', format: 'pem' }))
    const withJwt = JSON.parse(
      (
        await tollgate([
          'keys',
          'jwt',
          'add',
          created.key,
          '--kid',
          'k1',
          '--public-key',
          pemFile,
          '--json',
          ...config,
        ])
      ).stdout,
    )
    assert.deepEqual(withJwt.jwt.publicKeys, [{ kid: 'k1', alg: 'ES256' }])
    const withoutJwt = JSON.parse(
      (await tollgate(['keys', 'jwt', 'remove', created.key, '--kid', 'k1', '--json', ...config])).stdout,
    )
    assert.deepEqual(withoutJwt.jwt.publicKeys, [])

    // calls served on Postgres are in `tollgate usage` after the next flush, exactly
    await until(async () => (await call()) === 200, 'the key served again after the security change')
    for (let i = 0; i < 3; i++) assert.equal(await call(), 200)
    let usage: { key: string; method: string; calls: number; credits: number }[] = []
    await until(async () => {
      usage = JSON.parse((await tollgate(['usage', '--key', created.key, '--json', ...config])).stdout)
      return usage.reduce((sum, row) => sum + row.credits, 0) === charged
    }, `${charged} credits in tollgate usage`)
    // refusals (the missing secret: 401, as for an unknown key) cost nothing and are not in the ledger
    assert.ok(refusals > 0)
    assert.deepEqual(
      usage.map((row) => [row.key, row.method, row.calls]),
      [[created.key, 'eth_chainId', served]],
    )
    assert.match(
      (await tollgate(['usage', ...config])).stdout,
      new RegExp(`${created.key}\\s+devnet\\s+eth_chainId`),
    )

    assert.equal((await tollgate(['keys', 'revoke', created.key, ...config])).stdout, 'revoked\n')
    await until(
      async () => (await postJson(endpoint, rpcBody('eth_chainId'))).status === 401,
      'the revoked key refused',
    )
    const again = await refused(['keys', 'revoke', created.key, ...config])
    assert.match(again.stderr, /no active key/)
    const all = JSON.parse((await tollgate(['keys', 'list', '--all', '--json', ...config])).stdout)
    assert.equal(all.find((key: { key: string }) => key.key === created.key)?.status, 'revoked')
  })

  it('plans reads the config beside the Postgres database', async () => {
    const plans = JSON.parse((await tollgate(['plans', '--json', ...config])).stdout)
    assert.equal(plans.core.keysPerAccount, 1)
  })

  it('TOLLGATE_POSTGRES_URL overrides the file: a config naming SQLite edits the Postgres keys', async () => {
    const sqliteFile = join(dir, 'never.db')
    const sqliteConfig = join(dir, 'sqlite.yaml')
    writeFileSync(
      sqliteConfig,
      stringify({
        storage: { sqlite: sqliteFile },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
      }),
    )
    const env = { TOLLGATE_POSTGRES_URL: schema.url }
    const created = JSON.parse(
      (await tollgate(['keys', 'create', '--name', 'from-env', '--json', '--config', sqliteConfig], env))
        .stdout,
    )
    const listed = JSON.parse((await tollgate(['keys', 'list', '--json', ...config])).stdout)
    assert.ok(listed.some((key: { key: string }) => key.key === created.key))
    assert.equal(existsSync(sqliteFile), false)
  })

  it('a database that cannot be reached: one line naming it (no credentials), exit 1', async () => {
    const closed = await startTcpProxy(schema.url)
    const port = closed.port
    await closed.close()
    const downConfig = join(dir, 'down.yaml')
    writeFileSync(
      downConfig,
      stringify({
        storage: { postgres: `postgres://postgres:hunter2@127.0.0.1:${port}/nowhere` },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
      }),
    )
    for (const args of [['keys', 'list'], ['migrate']]) {
      const result = await refused([...args, '--config', downConfig])
      assert.equal(result.code, 1)
      assert.match(
        result.stderr,
        new RegExp(`^cannot (open|migrate) postgres 127.0.0.1:${port}/nowhere: connect ECONNREFUSED`),
      )
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
      assert.doesNotMatch(result.stderr, /hunter2/)
    }
  })

  it('/readyz follows Postgres going away and coming back; loaded keys keep serving, their usage is held and written after', async () => {
    assert.ok(gateway, 'the gateway of the CLI test')
    const { url, output, child } = gateway
    const { key } = JSON.parse(
      (await tollgate(['keys', 'create', '--name', 'ready', '--json', ...config])).stdout,
    )
    const endpoint = `${url}/v3/${key}`
    let charged = 0
    const call = async () => {
      const response = await postJson(endpoint, rpcBody('eth_chainId'))
      if (response.status === 200) charged += Number(response.headers.get('x-credits-charged'))
      return response.status
    }
    await until(async () => (await call()) === 200, 'the key served')
    const readiness = async () => {
      const response = await fetch(`${url}/readyz`).catch((err: Error) => {
        // what the gateway said, and whether it still runs, name what went wrong
        const ended = child.exitCode ?? child.signalCode
        const state = ended === null ? 'runs' : `exited (${ended})`
        throw new Error(`/readyz: ${err.cause ?? err.message}; the gateway ${state}:\n${output()}`)
      })
      return { status: response.status, body: (await response.json()) as { database: string } }
    }
    await until(async () => (await readiness()).status === 200, 'ready')
    proxy.cut()
    await until(async () => {
      const { status, body } = await readiness()
      return status === 503 && body.database === 'unavailable'
    }, 'not ready while the database is away')
    for (let i = 0; i < 5; i++) assert.equal(await call(), 200)
    await until(
      () => output().includes('usage flush or credit report failed'),
      'a flush failing while the database is away',
    )
    proxy.restore()
    await until(async () => {
      const { status, body } = await readiness()
      return status === 200 && body.database === 'open'
    }, 'ready again')
    // nothing served during the outage is lost from the ledger
    await until(async () => {
      const usage: { credits: number }[] = JSON.parse(
        (await tollgate(['usage', '--key', key, '--json', ...config])).stdout,
      )
      return usage.reduce((sum, row) => sum + row.credits, 0) === charged
    }, `${charged} credits in the ledger`)
    assert.equal(gateway.child.exitCode, null, output())
  })
})
