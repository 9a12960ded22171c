import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { childrenOf, freePort } from './helpers/localProcesses.ts'
import { rpcBody } from './helpers/postJson.ts'
import { parseMetrics } from './helpers/readMetrics.ts'
import { serverConnections } from './helpers/serverConnections.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** One request on a connection of its own (a fresh connection: any worker may take it). */
function fresh(
  url: string,
  body?: unknown,
  agent = new Agent({ keepAlive: false }),
): Promise<{ status: number; text: string; localPort: number }> {
  return new Promise((resolve, reject) => {
    let localPort = 0
    const req = request(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString()
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, localPort }))
      },
    )
    req.on('socket', (socket) => {
      if (socket.localPort) localPort = socket.localPort
      else
        socket.once('connect', () => {
          localPort = socket.localPort ?? 0
        })
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/**
 * A TCP gate in front of a node: while shut, a new connection waits (bytes held, nothing sent on)
 * until it opens; connections made before go on. `waiting()` names the processes whose connection
 * waits (the client's end, by `ss`).
 */
async function startGate(target: URL) {
  let shut = false
  const queued: (() => void)[] = []
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    sockets.add(client)
    const pass = () => {
      const upstream = connect(Number(target.port), target.hostname)
      sockets.add(upstream)
      client.pipe(upstream).pipe(client)
      for (const socket of [client, upstream]) socket.on('error', () => socket.destroy())
    }
    client.pause()
    if (shut) queued.push(pass)
    else pass()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    shut: () => {
      shut = true
    },
    open() {
      shut = false
      for (const pass of queued.splice(0)) pass()
    },
    /** The processes with a connection to the gate (the client's end). */
    clients(): number[] {
      const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${port} )`], {
        encoding: 'utf8',
      })
      return [...out.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]))
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** pino's JSON lines with this message, from a process's output. */
function logged(output: string, message: string): { msg: string; pid: number; [field: string]: unknown }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; pid: number })
    .filter((line) => line.msg.startsWith(message))
}

/**
 * On PostgreSQL, the first /readyz of a new process answers ready (it asks the database rather than
 * report a check that never ran), alone and with `--workers 2`; with workers, SIGHUP reaches every
 * worker through the primary, one still starting included.
 */
describe('tollgate start on PostgreSQL: the first /readyz, and SIGHUP with --workers 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-workers-'))
  const configFile = join(dir, 'tollgate.yaml')
  let node: TestNode
  let gate: Awaited<ReturnType<typeof startGate>>
  let schema: TestSchema
  let port: number
  let key = ''
  const config = (networks: string[], serverPort: number) => ({
    server: { host: '127.0.0.1', port: serverPort },
    storage: { postgres: schema.url },
    // network one through the gate: a worker that starts can be held in its warm-up
    networks: networks.map((name) => ({
      name,
      chainId: 31337,
      upstreams: [{ url: name === 'one' ? gate.url : node.url }],
    })),
    log: { level: 'info' },
  })

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gate = await startGate(new URL(node.url))
    schema = await createTestSchema()
    port = await freePort()
    writeFileSync(configFile, stringify(config(['one'], port)))
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    delete env.TOLLGATE_POSTGRES_URL
    const created = await run(
      process.execPath,
      [bin, 'keys', 'create', '--plan', 'team', '--json', '--config', configFile],
      { env },
    )
    key = (JSON.parse(created.stdout) as { key: string }).key
  })
  after(async () => {
    await gate?.close()
    await node?.stop()
    await schema?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('one process: its first /readyz is 200, with no reasons', async () => {
    writeFileSync(configFile, stringify(config(['one'], port)))
    const gateway = await startGatewayProcess(['start', '--config', configFile])
    try {
      const first = await fresh(`http://127.0.0.1:${port}/readyz`)
      assert.equal(first.status, 200, first.text)
      const body = JSON.parse(first.text) as { status: string; reasons: string[]; database: string }
      assert.deepEqual([body.status, body.reasons, body.database], ['ready', [], 'open'])
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      assert.equal(await exit, 0)
    } finally {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    }
  })

  it('--workers 2: every first /readyz is 200; SIGHUP adds a network on both workers, a port change refused once', async () => {
    writeFileSync(configFile, stringify(config(['one'], port)))
    const gateway = await startGatewayProcess(['start', '--workers', '2', '--config', configFile], {
      ready: /listening on \S+ \(2 workers\)/,
      timeoutMs: 90_000,
    })
    const workers = childrenOf(gateway.child.pid ?? 0)
    try {
      // fresh connections at once: the workers take them in turn, each its first probe among them
      const firsts = await Promise.all([1, 2, 3, 4].map(() => fresh(`http://127.0.0.1:${port}/readyz`)))
      for (const probe of firsts) assert.equal(probe.status, 200, probe.text)

      const newPort = await freePort()
      writeFileSync(configFile, stringify(config(['one', 'two'], newPort)))
      gateway.child.kill('SIGHUP')
      await until(() => logged(gateway.output(), 'config reloaded').length === 2, 'both workers reloaded')
      const reloads = logged(gateway.output(), 'config reloaded')
      assert.deepEqual(new Set(reloads.map((line) => line.pid)), new Set(workers))
      for (const line of reloads)
        assert.deepEqual(line.networks, { added: ['two'], removed: [], rebuilt: [] })
      const refusals = logged(gateway.output(), 'config reload: these keys need a restart')
      assert.deepEqual(
        refusals.map((line) => [line.pid, line.keys]),
        [[gateway.child.pid, ['server.port']]],
        'the primary names the refused key, once',
      )
      for (let i = 0; i < 8; i++) {
        const answer = await fresh(`http://127.0.0.1:${port}/two/v3/${key}`, rpcBody('eth_chainId'))
        assert.equal(answer.status, 200, answer.text)
      }

      // a worker forked after the reload starts on the reloaded config, not on the file as it is now
      writeFileSync(configFile, 'networks: [{ name: "Not Valid" }]\n')
      gateway.child.kill('SIGHUP')
      await until(() => logged(gateway.output(), 'config reload refused').length === 1, 'the refusal')
      assert.equal(logged(gateway.output(), 'config reload refused')[0]?.pid, gateway.child.pid)
      // the worker that answers a scrape was told of it (by a message that may still be on its way)
      await until(async () => {
        const { status, text } = await fresh(`http://127.0.0.1:${port}/metrics`)
        if (status !== 200) return false
        return parseMetrics(text).value('tollgate_config_reloads_total', { result: 'invalid' }) === 1
      }, 'the invalid reload counted')
      const [doomed] = workers
      // the worker forked in its place is held in its warm-up (its first connection to network one)
      gate.shut()
      process.kill(doomed as number, 'SIGKILL')
      let replacement: number | undefined
      await until(() => {
        replacement = childrenOf(gateway.child.pid ?? 0).find((pid) => !workers.includes(pid))
        return replacement !== undefined && gate.clients().includes(replacement)
      }, 'a worker forked in its place, warming up')
      // a reload while it starts: the worker that is up takes it at once
      const reloadsBefore = logged(gateway.output(), 'config reloaded').length
      writeFileSync(configFile, stringify(config(['one', 'two', 'three'], port)))
      gateway.child.kill('SIGHUP')
      await until(
        () => logged(gateway.output(), 'config reloaded').length > reloadsBefore,
        'the worker that is up reloaded',
      )
      gate.open()
      // the one that was starting ends on it too, once it listens
      await until(
        () => logged(gateway.output(), 'config reloaded').some((line) => line.pid === replacement),
        'the new worker reloaded',
      )
      const caughtUp = logged(gateway.output(), 'config reloaded').find((line) => line.pid === replacement)
      assert.deepEqual(caughtUp?.networks, { added: ['three'], removed: [], rebuilt: [] })
      for (const worker of [replacement, workers[1]]) {
        await until(async () => {
          const agent = new Agent({ keepAlive: true, maxSockets: 1 })
          try {
            const answer = await fresh(
              `http://127.0.0.1:${port}/three/v3/${key}`,
              rpcBody('eth_chainId'),
              agent,
            )
            assert.equal(answer.status, 200, answer.text)
            return serverConnections(port).get(answer.localPort) === worker
          } finally {
            agent.destroy()
          }
        }, `worker ${worker} serving network three`)
      }
      // its part came over the IPC channel: no config (nor any secret of it) in its environment
      const environ = readFileSync(`/proc/${replacement}/environ`, 'utf8')
      assert.ok(!environ.includes(schema.url), 'the database URL is not in the environment')
      assert.equal(logged(gateway.output(), 'a worker died').length, 1, 'it stays up')
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      assert.equal(await exit, 0)
    } finally {
      if (gateway.child.exitCode === null) {
        for (const pid of childrenOf(gateway.child.pid ?? 0)) process.kill(pid, 'SIGKILL')
        gateway.child.kill('SIGKILL')
      }
    }
  })
})
