// npm run bench:auth-failures: are wrong secrets cheap to refuse? One tollgate process in front of an
// anvil, with a key that needs its secret (auth.failuresPerMinute 1, so the attacker's address stays
// refused for the whole run). BENCH_AUTH_REQUESTS (default 10,000) requests with a wrong secret from
// 127.0.0.1 over BENCH_CONNECTIONS (default 4) connections, alternating in BENCH_ROUNDS (default 10)
// rounds with as many cheap honest calls (an eth_chainId answered from the cache, metered, from
// 127.0.0.4), so that both are measured on the same machine at the same time: the gateway's CPU for
// each, and their ratio. Refusing a wrong secret should cost about as much as a cached call (both are
// mostly HTTP); a slow hash (scrypt, ~100 ms a check) would make it a thousand times more. Meanwhile
// one honest request at a time from 127.0.0.2, paced by the attack's answers (one per 50): their
// median latency against the same requests before the attack.
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { type PlainResponse, requestFrom } from '../test/helpers/requestFrom.ts'
import {
  cpuTicks,
  createUnlimitedKeyWithSecret,
  startTollgateProcess,
  stopChildren,
  writeTollgateConfig,
} from './lib/processes.ts'

const attackRequests = Number(process.env.BENCH_AUTH_REQUESTS ?? 10_000)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 4)
const rounds = Number(process.env.BENCH_ROUNDS ?? 10)
/** One honest request in parallel per this many attack answers. */
const honestEvery = 50

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}
const basic = (password: string) => `Basic ${Buffer.from(`:${password}`).toString('base64')}`

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-auth-'))
const agents: Agent[] = []
try {
  const configFile = writeTollgateConfig(
    dir,
    'tollgate',
    { url: anvil.url },
    { gas: { enabled: false }, auth: { failuresPerMinute: 1 } },
  )
  const { key, secret } = createUnlimitedKeyWithSecret(configFile)
  const { origin, pid } = await startTollgateProcess(configFile)
  /** The gateway's CPU seconds spent while `work` runs. */
  const cpuDuring = async (work: () => Promise<void>): Promise<number> => {
    const before = cpuTicks(pid) ?? 0
    await work()
    return ((cpuTicks(pid) ?? 0) - before) / 100
  }

  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })
  const agent = (localAddress: string, maxSockets: number) => {
    const created = new Agent({ keepAlive: true, maxSockets, localAddress })
    agents.push(created)
    return created
  }
  const post = (authorization: string | undefined, via: Agent) =>
    requestFrom(`${origin}/v3/${key}`, {
      agent: via,
      body,
      headers: {
        'content-type': 'application/json',
        ...(authorization === undefined ? {} : { authorization }),
      },
    })
  /** `count` requests over `connections` connections, each sending its share one after another. */
  const load = (
    count: number,
    send: () => Promise<PlainResponse>,
    onAnswer: (answer: PlainResponse) => void,
  ) =>
    Promise.all(
      Array.from({ length: connections }, async () => {
        for (let i = 0; i < count / connections; i++) onAnswer(await send())
      }),
    ).then(() => undefined)

  const honest = agent('127.0.0.2', 1)
  const timedHonestRequest = async (): Promise<{ status: number; ms: number }> => {
    const started = performance.now()
    const { status } = await post(basic(secret), honest)
    return { status, ms: performance.now() - started }
  }
  for (let i = 0; i < 100; i++) await timedHonestRequest() // warm up both ends
  const baseline: { status: number; ms: number }[] = []
  for (let i = 0; i < 100; i++) baseline.push(await timedHonestRequest())

  const attacker = agent('127.0.0.1', connections)
  const cheap = agent('127.0.0.4', connections)
  const attackStatuses: number[] = []
  const cheapStatuses: number[] = []
  let attackSeconds = 0
  let attackCpu = 0
  let cheapCpu = 0
  let attackDone = false
  let wakeHonest: (() => void) | undefined
  const attack = (async () => {
    for (let round = 0; round < rounds; round++) {
      cheapCpu += await cpuDuring(() =>
        load(
          attackRequests / rounds,
          () => post(undefined, cheap),
          (answer) => cheapStatuses.push(answer.status),
        ),
      )
      const roundStarted = performance.now()
      attackCpu += await cpuDuring(() =>
        load(
          attackRequests / rounds,
          () => post(basic('0'.repeat(32)), attacker),
          (answer) => {
            attackStatuses.push(answer.status)
            if (attackStatuses.length % honestEvery === 0) wakeHonest?.()
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

  const count = (statuses: number[], status: number) => statuses.filter((each) => each === status).length
  const notOk = (requests: { status: number }[]) =>
    requests.filter((request) => request.status !== 200).length
  const [before, whileAttacked] = [median(baseline.map((r) => r.ms)), median(during.map((r) => r.ms))]
  process.stdout.write(
    [
      `${attackStatuses.length} wrong secrets: ${attackCpu.toFixed(2)} s of gateway CPU over ${attackSeconds.toFixed(1)} s ` +
        `(${count(attackStatuses, 401)} answered 401, ${count(attackStatuses, 429)} 429, ` +
        `${attackStatuses.length - count(attackStatuses, 401) - count(attackStatuses, 429)} other)`,
      `${cheapStatuses.length} cached honest calls between them: ${cheapCpu.toFixed(2)} s ` +
        `(${cheapStatuses.length - count(cheapStatuses, 200)} not answered 200)`,
      `wrong secret / cached call, gateway CPU: ${(attackCpu / cheapCpu).toFixed(2)}x`,
      `honest requests: median ${before.toFixed(2)} ms before (${notOk(baseline)} not 200), ` +
        `${whileAttacked.toFixed(2)} ms during the attack over ${during.length} (${notOk(during)} not 200): ` +
        `${(whileAttacked / before).toFixed(1)}x`,
    ]
      .map((line) => `${line}\n`)
      .join(''),
  )
} finally {
  for (const each of agents) each.destroy()
  await stopChildren()
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
