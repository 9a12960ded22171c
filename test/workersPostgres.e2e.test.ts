import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createStores } from '../src/app/createStores.ts'
import { formatGwei } from '../src/gas/formatGwei.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { childrenOf, freePort } from './helpers/localProcesses.ts'
import { serverConnections } from './helpers/serverConnections.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** eth_blockNumber's price: the only method these tests call. */
const callCredits = 80

type Answer = { status: number; localPort: number }

/**
 * `tollgate start --workers 2` on the test's own PostgreSQL schema and Redis key prefix, in front of
 * one anvil: the workers share the port, the balance, the ledger and key changes (docs/operations.md
 * "Workers" and "Running many instances").
 */
describe('tollgate start --workers 2 on PostgreSQL and Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-workers-pg-'))
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  let configFile: string
  let port: number
  let gateway: GatewayProcess
  /** Every call these tests were served, by key: what the ledger must hold at the end. */
  const served = new Map<string, number>()
  /** Per worker (by pid): agents of one kept-alive connection each, held by that worker. */
  const pinned = new Map<number, Agent[]>()
  const keys = { busy: '', small: '', doomed: '' }
  /** A key for the Gas API only (its calls are not in `served`). */
  let gasKey = ''

  /** The `tollgate` CLI, as its own process, on the gateway's config. */
  const tollgate = async (args: string[]) => {
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    delete env.TOLLGATE_POSTGRES_URL
    delete env.TOLLGATE_REDIS_URL
    return (await run(process.execPath, [bin, ...args, '--config', configFile], { env })).stdout
  }
  const createKey = async (dailyCredits: number) =>
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

  /** One eth_blockNumber over `agent`; a 200 is counted as served to `key`. */
  const call = (agent: Agent, key: string): Promise<Answer> =>
    new Promise((done, fail) => {
      let localPort = 0
      const req = request(
        `http://127.0.0.1:${port}/v3/${key}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume()
          res.on('end', () => {
            const status = res.statusCode ?? 0
            if (status === 200) served.set(key, (served.get(key) ?? 0) + 1)
            done({ status, localPort })
          })
        },
      )
      req.on('socket', (socket) => {
        const set = () => {
          localPort = socket.localPort ?? 0
        }
        if (socket.localPort) set()
        else socket.once('connect', set)
      })
      req.on('error', fail)
      req.end('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}')
    })

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    port = await freePort()
    configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port },
        storage: { postgres: schema.url },
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        // exact counts: a loaded machine must not pass for a Redis down (in open mode an exchange
        // that times out serves from the balance as last seen)
        metering: { flushMs: 200, redisTimeoutMs: 10_000 },
        // one window longer than the chain: baseFeeHistory's length tells the head it ends at
        gas: { windowBlocks: 1024, historyBlocks: 1024 },
        // info: the worker that indexes fees says so (nothing is logged per call)
        log: { level: 'info' },
      }),
    )
    // made before the start (the CLI migrates the schema): every worker loads them as it starts
    keys.busy = await createKey(1_000_000_000)
    keys.small = await createKey(80_000)
    keys.doomed = await createKey(1_000_000_000)
    gasKey = await createKey(1_000_000_000)
    gateway = await startGatewayProcess(['start', '--workers', '2', '--config', configFile], {
      ready: /listening on \S+ \(2 workers\)/,
      timeoutMs: 90_000,
    })
  })
  after(async () => {
    for (const agents of pinned.values()) for (const agent of agents) agent.destroy()
    if (gateway && gateway.child.exitCode === null) {
      for (const pid of childrenOf(gateway.child.pid ?? 0)) process.kill(pid, 'SIGKILL')
      gateway.child.kill('SIGKILL')
    }
    await node?.stop()
    await schema?.drop()
    await prefix?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('fresh connections go to both workers (processes of the primary); each keeps its own', async () => {
    const workers = new Set(childrenOf(gateway.child.pid ?? 0))
    assert.equal(workers.size, 2, 'two workers and nothing else (no devnet)')
    // one kept-alive connection per agent: find out which worker holds it, until each holds four
    let made = 0
    while ([...workers].some((pid) => (pinned.get(pid)?.length ?? 0) < 4)) {
      assert.ok(made++ < 64, `connections went to ${[...pinned.keys()].join(', ')} only`)
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      const { status, localPort } = await call(agent, keys.busy)
      assert.equal(status, 200)
      const pid = serverConnections(port).get(localPort)
      assert.ok(pid !== undefined && workers.has(pid), `connection ${localPort} held by ${pid}`)
      pinned.set(pid, [...(pinned.get(pid) ?? []), agent])
    }
    assert.equal(pinned.size, 2)
  })

  it('a key with 80,000 credits, called in 80s over both workers at once: exactly 1,000 served', async () => {
    const agents = [...pinned.values()].flat()
    const byWorker = new Map<Agent, number>()
    for (const [pid, each] of pinned) for (const agent of each) byWorker.set(agent, pid)
    const statuses: number[] = []
    const servedBy = new Map<number, number>()
    let next = 0
    // one caller per connection, 3,000 calls in all
    await Promise.all(
      agents.map(async (agent) => {
        while (next < 3_000) {
          next++
          const { status } = await call(agent, keys.small)
          statuses.push(status)
          const pid = byWorker.get(agent) as number
          if (status === 200) servedBy.set(pid, (servedBy.get(pid) ?? 0) + 1)
        }
      }),
    )
    assert.deepEqual(
      {
        served: statuses.filter((status) => status === 200).length,
        refused: statuses.filter((status) => status === 402).length,
      },
      { served: 1_000, refused: 2_000 },
    )
    assert.equal(servedBy.size, 2, 'both workers served the key')
    for (const [pid, count] of servedBy) assert.ok(count > 0, `worker ${pid} served ${count}`)
  })

  // at once by the database's notification (its parts tested in src/auth), or else by the key
  // registry's refresh each second: waited for here with until's own bound, and timed
  it('a key revoked by the CLI is refused by both workers', async (t) => {
    // one connection held by each worker
    const probes = [...pinned.values()].map((agents) => agents[0] as Agent)
    const ports: number[] = []
    for (const agent of probes) {
      const { status, localPort } = await call(agent, keys.doomed)
      assert.equal(status, 200)
      ports.push(localPort)
    }
    assert.equal(await tollgate(['keys', 'revoke', keys.doomed]), 'revoked\n')
    const revokedAt = Date.now()
    await until(async () => {
      const answers = await Promise.all(probes.map((agent) => call(agent, keys.doomed)))
      // each answer came over the same connection, so from the same worker
      assert.deepEqual(
        answers.map((answer) => answer.localPort),
        ports,
      )
      return answers.every((answer) => answer.status === 401)
    }, 'both workers refusing the revoked key')
    t.diagnostic(`CLI revoke exited → refused by both workers: ${Date.now() - revokedAt} ms`)
  })

  it('one worker indexes fees into PostgreSQL; both answer the Gas API at the head', async () => {
    const history = (agent: Agent) =>
      new Promise<string[] | undefined>((done, fail) => {
        const req = request(
          `http://127.0.0.1:${port}/networks/31337/baseFeeHistory`,
          { agent, headers: { authorization: `Basic ${Buffer.from(`${gasKey}:`).toString('base64')}` } },
          (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              text += chunk
            })
            res.on('end', () => done(res.statusCode === 200 ? (JSON.parse(text) as string[]) : undefined))
          },
        )
        req.on('error', fail)
        req.end()
      })
    const atHead = async (agent: Agent) => {
      const head = (await nodeRpc(node, 'eth_getBlockByNumber', ['latest', false])) as {
        number: string
        baseFeePerGas: string
      }
      const answer = await history(agent)
      return (
        answer?.length === Number(head.number) + 1 &&
        answer[answer.length - 1] === formatGwei(BigInt(head.baseFeePerGas))
      )
    }
    const probes = [...pinned.values()].map((agents) => agents[0] as Agent)
    await nodeRpc(node, 'evm_mine')
    for (const agent of probes) await until(() => atHead(agent), 'a worker at the head')
    assert.deepEqual(await history(probes[0] as Agent), await history(probes[1] as Agent))
    const leaders = [...gateway.output().matchAll(/"pid":(\d+)[^\n]*this instance indexes the fee history/g)]
    assert.deepEqual(
      leaders.map((match) => Number(match[1])).filter((pid) => pinned.has(pid)).length,
      1,
      'one worker indexes',
    )
  })

  it('a graceful stop (SIGTERM on the primary) flushes both workers: the ledger is exactly the calls served', async () => {
    // the primary exits once both workers have drained, flushed and exited
    gateway.child.kill('SIGTERM')
    assert.equal(await exited(gateway.child), 0, gateway.output().slice(-2_000))
    const stores = await createStores({ postgres: schema.url }, { exclusive: false })
    try {
      for (const [name, key] of Object.entries(keys)) {
        const found = await stores.keys.getKey(key)
        assert.ok(found, name)
        const rows = await stores.usage.queryUsage({
          keyId: found.id,
          fromDay: new Date().toISOString().slice(0, 10),
        })
        const ledger = rows.reduce(
          (total, row) => ({ calls: total.calls + row.calls, credits: total.credits + row.credits }),
          { calls: 0, credits: 0 },
        )
        const calls = served.get(key) ?? 0
        assert.ok(calls > 0, name)
        assert.deepEqual(ledger, { calls, credits: calls * callCredits }, name)
      }
    } finally {
      await stores.close()
    }
  })
})
