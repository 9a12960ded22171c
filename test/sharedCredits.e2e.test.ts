import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createStores } from '../src/app/createStores.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, startRedisServer, type TestPrefix } from './helpers/testRedis.ts'

const run = promisify(execFile)

/**
 * Three gateway processes on one PostgreSQL schema and one Redis (the test's own key prefix), in
 * front of one anvil: one key's balance holds exactly across them (docs/operations.md, Credits
 * across instances).
 */
/** A key of 80,000 credits a day (no per-second limit to speak of), made by the CLI against `configFile`. */
async function createKey(configFile: string): Promise<string> {
  const env = { ...process.env }
  delete env.TOLLGATE_CONFIG
  delete env.TOLLGATE_POSTGRES_URL
  delete env.TOLLGATE_REDIS_URL
  const args = [
    'keys',
    'create',
    '--plan',
    'custom',
    '--daily-credits',
    '80000',
    '--credits-per-second',
    '100000000',
  ]
  const { stdout } = await run(process.execPath, [bin, ...args, '--json', '--config', configFile], { env })
  return (JSON.parse(stdout) as { key: string }).key
}

describe('three gateways, one balance', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-shared-'))
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  let configFile: string
  const gateways: GatewayProcess[] = []

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { port: 0 },
        storage: { postgres: schema.url },
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        // exact counts: a loaded machine must not pass for a Redis down (in open mode an exchange
        // that times out serves from the balance as last seen)
        metering: { flushMs: 200, redisTimeoutMs: 10_000 },
        log: { level: 'warn' },
      }),
    )
  })
  after(async () => {
    for (const gateway of gateways) gateway.child.kill('SIGKILL')
    await node?.stop()
    await schema?.drop()
    await prefix?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('3,000 calls of 80 credits over three gateways on a key with 80,000: 1,000 served, 2,000 refused with 402, ledger 80,000', async () => {
    const key = await createKey(configFile)
    for (let i = 0; i < 3; i++) gateways.push(await startGatewayProcess(['start', '--config', configFile]))

    // 150 calls in flight at a time, spread over the three gateways in turn
    const statuses: number[] = []
    let next = 0
    await Promise.all(
      Array.from({ length: 150 }, async () => {
        while (next < 3_000) {
          const index = next++
          const gateway = gateways[index % 3] as GatewayProcess
          const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_blockNumber', [], index))
          statuses.push(answer.status)
        }
      }),
    )
    assert.equal(statuses.filter((status) => status === 200).length, 1_000)
    assert.equal(statuses.filter((status) => status === 402).length, 2_000)
    const refusedAfter = await postJson(`${gateways[2]?.url}/v3/${key}`, rpcBody('eth_blockNumber'))
    assert.equal(refusedAfter.status, 402)
    assert.equal(refusedAfter.headers.get('x-credits-remaining'), '0')

    // a graceful stop flushes each gateway's usage; the ledger is the calls served, exactly
    for (const gateway of gateways) gateway.child.kill('SIGTERM')
    await Promise.all(gateways.map((gateway) => exited(gateway.child)))
    gateways.length = 0
    const stores = await createStores({ postgres: schema.url }, { exclusive: false })
    try {
      const rows = await stores.usage.queryUsage({
        fromDay: new Date().toISOString().slice(0, 10),
      })
      const calls = rows.reduce((total, row) => total + row.calls, 0)
      const credits = rows.reduce((total, row) => total + row.credits, 0)
      assert.deepEqual({ calls, credits }, { calls: 1_000, credits: 80_000 })
    } finally {
      await stores.close()
    }
  })

  it('Redis stopped and started empty mid-load (open): every answer a 200 or a 402, the ledger the calls served', async () => {
    // a schema of its own: the ledger below is this test's key alone
    const ownSchema = await createTestSchema()
    const redis = await startRedisServer()
    try {
      const file = join(dir, 'own-redis.yaml')
      writeFileSync(
        file,
        stringify({
          server: { port: 0 },
          storage: { postgres: ownSchema.url },
          redis: { url: redis.url, keyPrefix: 'tollgate-test:' },
          networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
          metering: { flushMs: 200 },
          log: { level: 'warn' },
        }),
      )
      const key = await createKey(file)
      for (let i = 0; i < 3; i++) gateways.push(await startGatewayProcess(['start', '--config', file]))

      const statuses: number[] = []
      let next = 0
      let restarting: Promise<void> | undefined
      await Promise.all(
        Array.from({ length: 60 }, async () => {
          while (next < 2_000) {
            const index = next++
            // Redis goes away after 300 calls and comes back, empty, while the calls go on
            if (index === 300)
              restarting = redis
                .stop()
                .then(() => new Promise((resolve) => setTimeout(resolve, 500)))
                .then(() => redis.start())
            const gateway = gateways[index % 3] as GatewayProcess
            const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_blockNumber', [], index))
            statuses.push(answer.status)
          }
        }),
      )
      await restarting
      const served = statuses.filter((status) => status === 200).length
      assert.deepEqual(
        statuses.filter((status) => status !== 200 && status !== 402),
        [],
        'nothing but served or refused for the balance',
      )
      assert.ok(served >= 900, `served ${served}`)

      for (const gateway of gateways) gateway.child.kill('SIGTERM')
      await Promise.all(gateways.map((gateway) => exited(gateway.child)))
      gateways.length = 0
      const stores = await createStores({ postgres: ownSchema.url }, { exclusive: false })
      try {
        const rows = await stores.usage.queryUsage({
          fromDay: new Date().toISOString().slice(0, 10),
        })
        const calls = rows.reduce((total, row) => total + row.calls, 0)
        const credits = rows.reduce((total, row) => total + row.credits, 0)
        assert.deepEqual({ calls, credits }, { calls: served, credits: served * 80 })
      } finally {
        await stores.close()
      }
    } finally {
      await redis.stop()
      await ownSchema.drop()
    }
  })
})
