import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { startTcpProxy, type TcpProxy } from './helpers/startTcpProxy.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const run = promisify(execFile)

/** eth_blockNumber's price: the only method these tests call. */
const callCredits = 80
const dailyCredits = 1_000_000

/**
 * Usage held while PostgreSQL is away, when the gateway stops: kept in the spool (metering.spoolDir)
 * and added to the ledger, once, at the next start (docs/operations.md, Usage ledger).
 */
describe('usage spooled at a stop while PostgreSQL is away', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-spool-'))
  const spoolDir = join(dir, 'spool')
  let node: TestNode
  let schema: TestSchema
  let proxy: TcpProxy
  let configFile: string

  /** The CLI on the schema directly (not through the proxy). */
  const tollgate = async (args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, TOLLGATE_POSTGRES_URL: schema.url }
    delete env.TOLLGATE_CONFIG
    return (await run(process.execPath, [bin, ...args, '--config', configFile], { env })).stdout
  }
  const createKey = async () =>
    (
      JSON.parse(
        await tollgate([
          'keys',
          'create',
          '--plan',
          'custom',
          '--daily-credits',
          String(dailyCredits),
          '--credits-per-second',
          '100000000',
          '--json',
        ]),
      ) as { key: string }
    ).key
  /** What the ledger holds for a key: calls and credits. */
  const ledger = async (key: string) => {
    const rows = JSON.parse(await tollgate(['usage', '--key', key, '--json'])) as {
      calls: number
      credits: number
    }[]
    return {
      calls: rows.reduce((sum, row) => sum + row.calls, 0),
      credits: rows.reduce((sum, row) => sum + row.credits, 0),
    }
  }
  /** One eth_blockNumber on a connection of its own (workers take turns at new connections). */
  const call = (url: string, key: string) =>
    new Promise<{ status: number; remaining: string | undefined }>((done, fail) => {
      const req = request(
        `${url}/v3/${key}`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume()
          res.on('end', () =>
            done({
              status: res.statusCode ?? 0,
              remaining: res.headers['x-credits-remaining'] as string | undefined,
            }),
          )
        },
      )
      req.on('error', fail)
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }))
    })
  const spoolFiles = () => {
    try {
      return readdirSync(spoolDir)
    } catch {
      return []
    }
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    proxy = await startTcpProxy(schema.url)
    configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { port: 0 },
        storage: { postgres: proxy.url },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        gas: { enabled: false },
        metering: { flushMs: 200, spoolDir },
        log: { level: 'warn' },
      }),
    )
  })
  after(async () => {
    await proxy?.close()
    await schema?.drop()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  for (const workers of [1, 2]) {
    it(`${workers === 1 ? 'one process' : '--workers 2'}: 100 calls served during the outage, SIGTERM exits 0, the next start adds them once`, async () => {
      const key = await createKey()
      const args = ['start', '--config', configFile, ...(workers > 1 ? ['--workers', String(workers)] : [])]
      const env = { TOLLGATE_POSTGRES_URL: '' }
      const gateway = await startGatewayProcess(args, { env })
      proxy.cut()
      for (let i = 0; i < 100; i++) assert.equal((await call(gateway.url, key)).status, 200)
      gateway.child.kill('SIGTERM')
      assert.equal(await exited(gateway.child), 0, gateway.output())
      assert.match(gateway.output(), /kept in a spool file/)
      const files = spoolFiles()
      // each worker keeps its own (the workers took turns at the 100 connections)
      assert.equal(files.length, workers, files.join(', '))
      for (const file of files) assert.equal(statSync(join(spoolDir, file)).mode & 0o777, 0o600)
      assert.equal(statSync(spoolDir).mode & 0o777, 0o700)

      proxy.restore()
      assert.deepEqual(await ledger(key), { calls: 0, credits: 0 }, 'nothing reached the ledger meanwhile')
      const again = await startGatewayProcess(args, { env })
      assert.deepEqual(await ledger(key), { calls: 100, credits: 100 * callCredits })
      assert.deepEqual(spoolFiles(), [])
      // the day's balance counts them too: it was read after the spool was added
      const answer = await call(again.url, key)
      assert.equal(answer.remaining, String(dailyCredits - 101 * callCredits))
      again.child.kill('SIGTERM')
      assert.equal(await exited(again.child), 0, again.output())
      assert.deepEqual(await ledger(key), { calls: 101, credits: 101 * callCredits }, 'counted once')
    })
  }
})
