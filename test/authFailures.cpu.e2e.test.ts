import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { rpcBody } from './helpers/postJson.ts'
import { type PlainResponse, requestFrom } from './helpers/requestFrom.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const attackRequests = 10_000
const attackConnections = 4
/** One honest request in parallel per this many attack answers. */
const honestEvery = 50
/**
 * The attack alternates with as many cheap honest calls (an `eth_chainId` the gateway answers from its
 * cache, metered) in this many rounds, so that both run on the same machine at the same time: a
 * request's CPU time grows when other processes load the machine (other test files do), so a fixed
 * number of seconds would measure the machine, not the gateway.
 */
const rounds = 10
/**
 * A wrong secret may cost the gateway at most this many times the CPU of an honest call it answers from
 * its cache. Refusing one costs about as much (both are mostly HTTP); a slow hash (scrypt, ~100 ms
 * a check) would make each cost a thousand times more.
 */
const cpuBudgetRatio = 1.5
const burst = 20 // auth.failureBurst's default
/**
 * auth.failuresPerMinute: the allowance comes back once a minute here (the default is once a second),
 * so the attacker's address is still refused when the test asks again after the attack, however long
 * a loaded machine takes between the two.
 */
const perMinute = 1

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())

/** User plus system CPU time the process has used so far, in seconds (/proc/PID/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

describe('wrong secrets are cheap: 10,000 of them against a gateway process', () => {
  let node: TestNode
  let gateway: GatewayProcess
  let dir: string
  let key: string
  let secret: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    dir = mkdtempSync(join(tmpdir(), 'tollgate-auth-cpu-'))
    const configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        gas: { enabled: false },
        auth: { failuresPerMinute: perMinute },
        log: { level: 'warn' },
      }),
    )
    // the CLI makes the secret (and the database's hash key); the gateway must agree with it
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    const { stdout } = await promisify(execFile)(
      process.execPath,
      // limits far above the test's calls, so the cheap honest calls are all answered
      [
        bin,
        'keys',
        'create',
        '--plan',
        'custom',
        '--daily-credits',
        '1000000000',
        '--credits-per-second',
        '1000000',
        '--secret',
        '--json',
        '--config',
        configFile,
      ],
      { env },
    )
    ;({ key, secret } = JSON.parse(stdout) as { key: string; secret: string })
    gateway = await startGatewayProcess(['start', '--config', configFile])
  })
  after(async () => {
    if (gateway) {
      gateway.child.kill('SIGTERM')
      await exited(gateway.child)
    }
    await node?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const body = JSON.stringify(rpcBody('eth_chainId'))
  const basic = (password: string) => `Basic ${Buffer.from(`:${password}`).toString('base64')}`
  const post = (authorization: string | undefined, options: { localAddress?: string; agent?: Agent }) =>
    requestFrom(`${gateway.url}/v3/${key}`, {
      ...options,
      body,
      headers: {
        'content-type': 'application/json',
        ...(authorization === undefined ? {} : { authorization }),
      },
    })

  /** `count` requests over `attackConnections` connections, each sending its share one after another. */
  async function load(
    count: number,
    send: () => Promise<PlainResponse>,
    onAnswer: (answer: PlainResponse) => void,
  ): Promise<void> {
    await Promise.all(
      Array.from({ length: attackConnections }, async () => {
        for (let i = 0; i < count / attackConnections; i++) onAnswer(await send())
      }),
    )
  }

  /** The gateway's CPU seconds spent while `work` runs. */
  async function cpuDuring(work: () => Promise<void>): Promise<number> {
    const pid = gateway.child.pid as number
    const before = cpuSeconds(pid)
    await work()
    return cpuSeconds(pid) - before
  }

  /** One request with the right secret from 127.0.0.2: its status and how long it took. */
  const honest = new Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' })
  after(() => honest.destroy())
  async function timedHonestRequest(): Promise<{ status: number; ms: number }> {
    const started = performance.now()
    const { status } = await post(basic(secret), { agent: honest })
    return { status, ms: performance.now() - started }
  }

  it('costs the gateway about what as many cached honest calls cost; 401 then 429; honest clients keep their answers and latency', async (t) => {
    for (let i = 0; i < 100; i++) await timedHonestRequest() // warm up both ends
    const baseline: number[] = []
    for (let i = 0; i < 100; i++) {
      const { status, ms } = await timedHonestRequest()
      assert.equal(status, 200)
      baseline.push(ms)
    }

    const attacker = new Agent({ keepAlive: true, maxSockets: attackConnections, localAddress: '127.0.0.1' })
    const cheap = new Agent({ keepAlive: true, maxSockets: attackConnections, localAddress: '127.0.0.4' })
    const answers: PlainResponse[] = []
    const cheapStatuses: number[] = []
    let attackSeconds = 0
    let attackCpu = 0
    let cheapCpu = 0
    let attackDone = false
    let wakeHonest: (() => void) | undefined
    const started = performance.now()
    const attack = (async () => {
      for (let round = 0; round < rounds; round++) {
        cheapCpu += await cpuDuring(() =>
          load(
            attackRequests / rounds,
            () => post(undefined, { agent: cheap }),
            (answer) => {
              cheapStatuses.push(answer.status)
            },
          ),
        )
        const roundStarted = performance.now()
        attackCpu += await cpuDuring(() =>
          load(
            attackRequests / rounds,
            () => post(basic('0'.repeat(32)), { agent: attacker }),
            (answer) => {
              answers.push(answer)
              if (answers.length % honestEvery === 0) wakeHonest?.()
            },
          ),
        )
        attackSeconds += (performance.now() - roundStarted) / 1000
      }
    })().finally(() => {
      attackDone = true
      wakeHonest?.()
    })
    // an honest request at a time, paced by the attack's answers, so the CPU measured is the attack's
    const during: { status: number; ms: number }[] = []
    while (!attackDone) {
      during.push(await timedHonestRequest())
      await new Promise<void>((resolve) => {
        wakeHonest = attackDone ? undefined : resolve
        if (attackDone) resolve()
      })
    }
    await attack
    const lastedSeconds = (performance.now() - started) / 1000
    attacker.destroy()
    cheap.destroy()
    t.diagnostic(
      `10,000 wrong secrets: ${attackCpu.toFixed(2)} s of gateway CPU over ${attackSeconds.toFixed(1)} s ` +
        `(10,000 cached honest calls between them: ${cheapCpu.toFixed(2)} s); ` +
        `${during.length} honest requests, median ${median(during.map((r) => r.ms)).toFixed(2)} ms ` +
        `(before: ${median(baseline).toFixed(2)} ms)`,
    )

    assert.deepEqual(
      cheapStatuses.filter((status) => status !== 200),
      [],
      'every cached honest call is answered',
    )
    assert.ok(
      attackCpu <= cheapCpu * cpuBudgetRatio,
      `the wrong secrets cost the gateway ${attackCpu.toFixed(2)} s of CPU, the cached calls ${cheapCpu.toFixed(2)} s`,
    )

    assert.equal(answers.length, attackRequests)
    const statuses = answers.map((answer) => answer.status)
    // the first `burst` the gateway took are checked (answers on parallel connections may arrive a little out of order)
    const early = statuses.slice(0, burst + attackConnections).filter((status) => status === 401).length
    assert.ok(early >= burst, `${early} of the first answers are 401`)
    const checked = statuses.filter((status) => status === 401).length
    // one more attempt comes back each minute the attack lasts
    assert.ok(checked <= burst + Math.ceil((lastedSeconds / 60) * perMinute) + 1, `${checked} answered 401`)
    assert.equal(statuses.filter((status) => status === 429).length, attackRequests - checked)
    const refused = answers.find((answer) => answer.status === 429) as PlainResponse
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: 429,
        message: 'Too Many Requests',
        details: 'too many failed authentications; try again later',
      },
    })
    assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/)

    assert.ok(during.length > 0)
    assert.deepEqual(
      during.filter((request) => request.status !== 200),
      [],
      'every honest request is answered',
    )
    const factor = median(during.map((request) => request.ms)) / median(baseline)
    assert.ok(factor < 10, `honest requests' median latency grew ${factor.toFixed(1)}x during the attack`)

    // the attacker's address is refused unchecked, even with the right secret; others are not
    assert.equal((await post(basic(secret), { localAddress: '127.0.0.1' })).status, 429)
    assert.equal((await post(basic(secret), { localAddress: '127.0.0.3' })).status, 200)
  })
})
