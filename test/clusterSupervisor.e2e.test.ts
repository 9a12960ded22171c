import assert from 'node:assert/strict'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { bin, exited } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

/**
 * Another supervisor's cluster primary (as PM2's cluster mode is): it forks `tollgate ARGS` as a
 * node:cluster worker with `env`, and never answers the worker's messages.
 */
const supervisor = `
import cluster from 'node:cluster'
const [bin, ...args] = JSON.parse(process.env.SUPERVISED)
cluster.setupPrimary({ exec: bin, args, execArgv: [] })
const worker = cluster.fork(JSON.parse(process.env.WORKER_ENV))
cluster.on('message', (_worker, message) => console.log('supervisor got', JSON.stringify(message)))
worker.on('exit', (code) => { console.log('worker exited', code); process.exit(0) })
process.on('SIGTERM', () => worker.process.kill('SIGTERM'))
`

/** The supervisors started, each the leader of its process group. */
const groups = new Set<ChildProcess>()

function supervise(
  args: string[],
  workerEnv: Record<string, string>,
): { child: ChildProcess; output(): string } {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SUPERVISED: JSON.stringify([bin, ...args]),
    WORKER_ENV: JSON.stringify(workerEnv),
  }
  delete env.TOLLGATE_CONFIG
  // its own process group: a test that times out still ends the supervisor and its worker (after)
  const child = spawn(process.execPath, ['--input-type=module', '-e', supervisor], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  groups.add(child)
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  return { child, output: () => output }
}

describe('tollgate start as a worker of another cluster supervisor (PM2 cluster mode)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-supervisor-'))
  const configFile = join(dir, 'tollgate.yaml')
  let node: TestNode
  let port: number
  let key = ''

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    port = await freePort()
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port, workers: 2 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
      }),
    )
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    const created = execFileSync(
      process.execPath,
      [bin, 'keys', 'create', '--plan', 'team', '--json', '--config', configFile],
      { env, encoding: 'utf8' },
    )
    key = (JSON.parse(created) as { key: string }).key
  })
  after(async () => {
    for (const child of groups) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // the group has ended
      }
    }
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('without the marker it serves as one process, and stops on SIGTERM', async () => {
    const run = supervise(['start', '--config', configFile], {})
    try {
      await until(
        () => /listening on/.test(run.output()) || run.child.exitCode !== null,
        'the worker listening',
        60_000,
      )
      assert.match(run.output(), /server.workers 2 ignored/)
      assert.doesNotMatch(run.output(), /supervisor got/, 'it asked its supervisor nothing')
      const answer = await postJson(`http://127.0.0.1:${port}/v3/${key}`, rpcBody('eth_chainId'))
      assert.equal(answer.status, 200)
      assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
      const exit = exited(run.child)
      run.child.kill('SIGTERM')
      assert.equal(await exit, 0)
      assert.match(run.output(), /worker exited 0/)
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL')
    }
  })

  it('marked, under a primary that never answers: it gives up with a clear line and exit code 1', async () => {
    const run = supervise(['start', '--config', configFile], { TOLLGATE_WORKER: '1' })
    try {
      await exited(run.child)
      assert.match(run.output(), /supervisor got \{"tollgate":"spec\?"\}/)
      assert.match(run.output(), /tollgate could not start: no spec from the primary within 10 s/)
      assert.match(run.output(), /worker exited 1/)
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL')
    }
  })
})
