import assert from 'node:assert/strict'
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createSqliteKeyStore } from '../src/auth/createSqliteKeyStore.ts'
import { createSqliteUsageStore } from '../src/metering/createSqliteUsageStore.ts'
import { openSqlite } from '../src/store/openSqlite.ts'
import { bin, exited } from './helpers/gatewayProcess.ts'
import { childrenOf, freePort } from './helpers/localProcesses.ts'
import { until } from './helpers/until.ts'

// the compiled CLI, as `npm start` runs it (npm test builds first): no TypeScript loader, whose
// esbuild service would be one more child of the primary
const tollgateArgs = [bin]

/** `tollgate ARGS` in `cwd`, as a user runs it; its output once it ends. */
function tollgate(cwd: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(process.execPath, [...tollgateArgs, ...args], { cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${err.message}: ${stderr}`)) : done(stdout),
    )
  })
}

/** Whether `pid` runs (a zombie, dead and waiting to be reaped by init, does not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

/** The processes holding the server side of established connections on `port`. */
function serverPids(port: number): Set<number> {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
  })
  return new Set([...out.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1])))
}

/** The process holding the server side of the connection from local port `clientPort` to `port`. */
function serverPidOf(port: number, clientPort: number): number | undefined {
  const out = execFileSync('ss', ['-tnpH', `( sport = :${port} and dport = :${clientPort} )`], {
    encoding: 'utf8',
  })
  const found = /pid=(\d+)/.exec(out)?.[1]
  return found === undefined ? undefined : Number(found)
}

type Answer = { status: number; body: string }

/** POSTs one JSON-RPC call over `agent` (kept-alive connections). */
function post(agent: Agent, url: string, method: string): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] })
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', fail)
    req.end(body)
  })
}

describe('tollgate start --workers 2 on the embedded default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-workers-'))
  let port: number
  let url: string
  let primary: ChildProcess
  let output = ''
  let demoKey: string
  let agent = new Agent({ keepAlive: true, maxSockets: 16 })

  before(async () => {
    port = await freePort()
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    primary = spawn(process.execPath, [...tollgateArgs, 'start', '--workers', '2', '--port', String(port)], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    primary.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    primary.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    await until(
      () => /Demo API key: (\w+)/.test(output) || primary.exitCode !== null,
      'the gateway to start',
      90_000,
    )
    assert.match(output, /listening on http:\/\/127\.0\.0\.1:\d+ \(2 workers\)/)
    assert.match(output, /devnet node: http:\/\/127\.0\.0\.1:\d+ \(anvil, chain id 31337\)/)
    demoKey = /Demo API key: (\w+)/.exec(output)?.[1] ?? ''
    url = `http://127.0.0.1:${port}`
  })
  after(async () => {
    agent.destroy()
    if (primary.exitCode === null) {
      for (const pid of childrenOf(primary.pid ?? 0)) process.kill(pid, 'SIGKILL')
      primary.kill('SIGKILL')
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('both workers answer on the one port', async () => {
    const answers = await Promise.all(
      Array.from({ length: 64 }, () => post(agent, `${url}/v3/${demoKey}`, 'eth_blockNumber')),
    )
    assert.ok(answers.every((answer) => answer.status === 200 && answer.body.includes('"result":"0x')))
    const holders = serverPids(port)
    const children = new Set(childrenOf(primary.pid ?? 0))
    assert.equal(holders.size, 2, `connections held by ${[...holders].join(', ')}`)
    for (const pid of holders) {
      assert.ok(children.has(pid), `${pid} is a worker of the primary`)
      assert.notEqual(pid, primary.pid)
    }
  })

  it('a key made by the CLI meanwhile, 80,000 credits in calls of 80 over both workers: exactly 1,000 served', async () => {
    const created = JSON.parse(
      await tollgate(dir, [
        'keys',
        'create',
        '--plan',
        'custom',
        '--daily-credits',
        '80000',
        '--credits-per-second',
        '100000000',
        '--json',
      ]),
    ) as { key: string }
    const keyUrl = `${url}/v3/${created.key}`
    // each worker finds the new key in the shared file within its reload interval; until then it
    // refuses it (free of charge). Fresh connections go round the two workers: two served in a row
    // is both. What the probes were served comes off the 80,000 like any call.
    let probesServed = 0
    const once = new Agent({ keepAlive: false })
    await until(async () => {
      const pair = [await post(once, keyUrl, 'eth_blockNumber'), await post(once, keyUrl, 'eth_blockNumber')]
      const ok = pair.filter((answer) => answer.status === 200).length
      probesServed += ok
      return ok === 2
    }, 'the key to load on both workers')
    const answers = await Promise.all(
      Array.from({ length: 3_000 }, () => post(agent, keyUrl, 'eth_blockNumber')),
    )
    const served = answers.filter((answer) => answer.status === 200).length
    const refused = answers.filter((answer) => answer.status === 402).length
    assert.deepEqual({ served: served + probesServed, refused }, { served: 1_000, refused: 3_000 - served })
    // both workers served this key's calls
    assert.equal(serverPids(port).size, 2)
    // the ledger both workers write to the one file: exactly the calls served
    await until(async () => (await usageOf(dir, created.key)).credits >= 80_000, 'the usage to be flushed')
    assert.deepEqual(await usageOf(dir, created.key), { calls: 1_000, credits: 80_000 })
  })

  it("a core key's 1,000-call batch leaves its per-second bucket in debt: the next batches 429 on both workers", async () => {
    const created = JSON.parse(await tollgate(dir, ['keys', 'create', '--plan', 'core', '--json'])) as {
      key: string
    }
    const keyUrl = `${url}/v3/${created.key}`
    const batch = JSON.stringify(
      Array.from({ length: 1_000 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })),
    )
    /**
     * The batch on a connection of its own (fresh connections go round the two workers); the worker
     * that answered: the process holding the server side of that connection, looked up while it is
     * still open.
     */
    const postBatch = () =>
      new Promise<{ status: number; retryAfter: number; pid: number | undefined }>((done, fail) => {
        const own = new Agent({ keepAlive: true, maxSockets: 1 })
        const req = request(
          keyUrl,
          { method: 'POST', agent: own, headers: { 'content-type': 'application/json' } },
          (res) => {
            const pid = serverPidOf(port, res.socket.localPort ?? 0)
            res.resume()
            res.on('end', () => {
              own.destroy()
              done({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 0), pid })
            })
          },
        )
        req.on('error', fail)
        req.end(batch)
      })
    // until both workers have loaded the key (two calls in a row answered), then a full bucket
    const once = new Agent({ keepAlive: false })
    await until(async () => {
      const pair = [await post(once, keyUrl, 'eth_chainId'), await post(once, keyUrl, 'eth_chainId')]
      return pair.every((answer) => answer.status === 200)
    }, 'the key to load on both workers')
    const sentMs = Date.now()
    await until(async () => (await postBatch()).status === 200, 'a batch to be served')
    // 5,080 credits on 500 per second: 4,580 owed; the next batches wait 9.16 s for it and 1 s for a
    // full bucket, less what passed since the batch was served (at most since it was sent), on
    // whichever worker they reach
    const refused = [await postBatch(), await postBatch(), await postBatch(), await postBatch()]
    const answeredMs = Date.now()
    assert.deepEqual(
      refused.map((answer) => answer.status),
      [429, 429, 429, 429],
    )
    const soonest = Math.ceil((10_160 - (answeredMs - sentMs)) / 1_000)
    const latest = Math.ceil(10_160 / 1_000)
    assert.ok(
      refused.every((answer) => answer.retryAfter >= Math.max(1, soonest) && answer.retryAfter <= latest),
      `Retry-After ${refused.map((answer) => answer.retryAfter).join(', ')}, expected ${soonest} to ${latest}`,
    )
    // both workers refused: the debt is the primary's bucket's, not one worker's
    const children = new Set(childrenOf(primary.pid ?? 0))
    const refusedBy = new Set(refused.map((answer) => answer.pid))
    assert.equal(refusedBy.size, 2, `refused by ${[...refusedBy].join(', ')}`)
    for (const pid of refusedBy) assert.ok(pid !== undefined && children.has(pid), `${pid} is a worker`)
  })

  it('a worker that dies is replaced, and the port answers all along', async () => {
    const before = childrenOf(primary.pid ?? 0)
    const victim = [...serverPids(port)][0]
    assert.ok(victim !== undefined && before.includes(victim))
    // its kept-alive connections die with it; the port does not
    agent.destroy()
    process.kill(victim, 'SIGKILL')
    await until(() => !childrenOf(primary.pid ?? 0).includes(victim), 'the primary to see the worker gone')
    // the other worker answers every new connection while the primary forks a new one
    const once = new Agent({ keepAlive: false })
    const during = await Promise.all(
      Array.from({ length: 20 }, () => post(once, `${url}/v3/${demoKey}`, 'eth_blockNumber')),
    )
    assert.ok(during.every((answer) => answer.status === 200))
    await until(() => {
      const now = childrenOf(primary.pid ?? 0)
      return !now.includes(victim) && now.length === before.length
    }, 'a new worker')
    const replacement = childrenOf(primary.pid ?? 0).find((pid) => !before.includes(pid))
    assert.ok(replacement !== undefined)
    // the new worker answers too (fresh connections go round the workers)
    await until(async () => {
      agent.destroy()
      agent = new Agent({ keepAlive: true, maxSockets: 16 })
      await Promise.all(
        Array.from({ length: 16 }, () => post(agent, `${url}/v3/${demoKey}`, 'eth_blockNumber')),
      )
      return serverPids(port).has(replacement)
    }, 'the new worker to answer')
  })

  it('SIGTERM on the primary stops every worker and the devnet, and leaves no process behind', async () => {
    const children = childrenOf(primary.pid ?? 0)
    // two workers and the anvil
    assert.equal(
      children.length,
      3,
      execFileSync('ps', ['-o', 'pid,ppid,stat,args', '-p', children.join(',')], { encoding: 'utf8' }),
    )
    primary.kill('SIGTERM')
    assert.equal(await exited(primary), 0, output.slice(-2000))
    for (const pid of children) assert.equal(isRunning(pid), false, `process ${pid} still runs`)
    await assert.rejects(post(new Agent(), `${url}/v3/${demoKey}`, 'eth_blockNumber'))
  })
})

/** One key's usage in the gateway's SQLite file today (calls and credits, every worker's). */
async function usageOf(dir: string, key: string): Promise<{ calls: number; credits: number }> {
  const db = openSqlite(join(dir, 'data', 'tollgate.db'), { migrate: false })
  try {
    const found = await createSqliteKeyStore(db).getKey(key)
    assert.ok(found)
    const rows = await createSqliteUsageStore(db).queryUsage({
      keyId: found.id,
      fromDay: new Date().toISOString().slice(0, 10),
    })
    return rows.reduce(
      (total, row) => ({ calls: total.calls + row.calls, credits: total.credits + row.credits }),
      {
        calls: 0,
        credits: 0,
      },
    )
  } finally {
    db.close()
  }
}
