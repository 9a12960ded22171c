// npm run bench:fuzz: hostile bodies at a running tollgate (spawned as `tollgate start`, in front of a
// real anvil), over HTTP and WebSocket at once, from a seeded generator (test/helpers/fuzzBodies.ts):
// random bytes, truncated and structurally wrong JSON, wrong envelopes, every parameter of every
// offered method mutated, nesting around the depth limit, giant strings, huge batches. Counts answers
// with HTTP status >= 500 and the gateway's own -32603 errors (both must be 0), checks the process is
// alive and still answers correctly, and that its RSS comes back within 50 MB of where it started.
// Before that, it times the depth scan every body goes through against JSON.parse.
// Bounded: FUZZ_BODIES (default 100000), FUZZ_SECONDS (default 900: no new bodies after that),
// FUZZ_SEED (default 20261122), FUZZ_CONNECTIONS (HTTP, default 32), FUZZ_SOCKETS (default 8).
// FUZZ_ONLY=index,... sends only those bodies (a finding's replay). `--record` writes bench/RESULTS.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { encodeFunctionData } from 'viem'
import WebSocket from 'ws'
import { configSchema } from '../src/config/configSchema.ts'
import { demoAbi } from '../src/devnet/contracts.ts'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { checkFuzzAnswer, type FuzzFinding } from '../test/helpers/checkFuzzAnswer.ts'
import { expectsAnswer } from '../test/helpers/expectsAnswer.ts'
import { type FuzzBody, type FuzzOptions, fuzzBody } from '../test/helpers/fuzzBodies.ts'
import { measureDepthScan } from './lib/measureDepthScan.ts'
import { children, rssMiB, startTollgate } from './lib/processes.ts'

const total = Number(process.env.FUZZ_BODIES ?? 100_000)
const seconds = Number(process.env.FUZZ_SECONDS ?? 900)
const seed = Number(process.env.FUZZ_SEED ?? 20261122)
const connections = Number(process.env.FUZZ_CONNECTIONS ?? 32)
const socketCount = Number(process.env.FUZZ_SOCKETS ?? 8)
const only = process.env.FUZZ_ONLY?.split(',').map(Number)
const record = process.argv.includes('--record')
/** Set when the bench ends: anvil stopping then is no finding. */
let stopping = false

/** Every third body goes over WebSocket, the rest over HTTP: which one is fixed by its index. */
const overWebSocket = (index: number) => index % 3 === 2
/** Frames per connection before it is closed and another opened (subscriptions and all). */
const framesPerSocket = 2_000
/** Answers a socket may owe before it waits. */
const socketWindow = 16

const defaults = configSchema.parse({})
const { maxJsonDepth, maxBatchSize, maxBodyBytes } = defaults.server
const { maxFrameBytes } = defaults.websocket

const scan = measureDepthScan(maxJsonDepth, maxBodyBytes)
process.stdout.write(`${scan}\n\n`)

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-'))
// an answer that never comes is a finding, not a hung bench: well past upstreams.timeoutMs (30 s)
const dispatcher = new Agent({ connections, headersTimeout: 120_000, bodyTimeout: 120_000 })
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 5 })
  const tollgate = await startTollgate(dir, 'fuzz', { url: anvil.url, ws: anvil.wsUrl })
  const child = children.find((each) => each.pid === tollgate.pid)
  let exit: string | undefined
  child?.once('exit', (code, signal) => {
    exit = `exited with ${signal ?? code}`
  })
  // a body the gateway lets through that kills the node behind it is a finding too: the run stops
  // there, naming the bodies in flight (replay them with FUZZ_ONLY and FUZZ_CONNECTIONS=1)
  let deadline = Number.POSITIVE_INFINITY
  const inFlight = new Set<FuzzBody>()
  /** The WebSocket bodies sent last, by every socket (answers cannot be told apart by id). */
  const wsRecent: FuzzBody[] = []
  let nodeDeath: string | undefined
  let anvilStderr = ''
  anvil.process.stderr?.on('data', (chunk: Buffer) => {
    anvilStderr += chunk.toString()
  })
  anvil.process.once('exit', (code, signal) => {
    if (stopping) return
    const panic = anvilStderr
      .replaceAll(String.fromCharCode(27), '')
      .replace(/\[[0-9;]*m/g, '')
      .split('\n')
      .slice(0, 3)
      .join(' ')
    const suspects = [...inFlight, ...wsRecent].map((body) => body.index).sort((a, b) => a - b)
    nodeDeath = `anvil exited (${signal ?? code}) with #${suspects.join(', #')} in flight: ${panic}`
    deadline = 0
  })
  const wsUrl = `${tollgate.origin.replace('http', 'ws')}/ws/v3/${tollgate.key}`
  const anchors = {
    addresses: [fixtures.demo, ...fixtures.accounts.slice(0, 3)],
    hashes: [fixtures.deployTx, fixtures.eip1559Tx, fixtures.failedTx],
  }
  // frames over websocket.maxFrameBytes close the socket (1009) by design: none are made on purpose
  const wsOptions: FuzzOptions = { seed, maxJsonDepth, maxBatchSize, maxStringChars: 1_000_000, anchors }
  const httpOptions: FuzzOptions = { ...wsOptions, maxBodyBytes }

  // warm: the code paths a valid call takes are loaded before the first RSS reading
  const counterCall = {
    to: fixtures.demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }),
  }
  for (let round = 0; round < 20; round++) await checkValidCalls(tollgate.url, wsUrl, counterCall)
  const rssBefore = rssMiB(tollgate.pid)
  const heapBefore = await heapUsedMb(tollgate.origin)
  let rssPeak = rssBefore

  const findings: FuzzFinding[] = []
  const statuses = new Map<string, number>()
  const codes = new Map<string, number>()
  const nodeInternal = new Map<string, number>()
  const kinds = new Map<string, number>()
  let results = 0
  const tally = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)
  const note = (answer: string, origin: string) => {
    const checked = checkFuzzAnswer(answer)
    for (const code of checked.codes) tally(codes, String(code))
    results += checked.results
    for (const message of checked.nodeInternal) tally(nodeInternal, message.replace(/\s+/g, ' ').slice(0, 80))
    for (const problem of checked.problems) findings.push({ ...problem, origin })
  }

  const indices = only ?? Array.from({ length: total }, (_, index) => index)
  const httpQueue = indices.filter((index) => !overWebSocket(index))
  const wsQueue = indices.filter(overWebSocket)
  const started = performance.now()
  deadline = started + seconds * 1_000
  let sentHttp = 0
  let sentWs = 0
  let skippedFrames = 0
  const takeFrom = (queue: number[]) => {
    let next = 0
    return () => (performance.now() < deadline ? queue[next++] : undefined)
  }
  const nextHttp = takeFrom(httpQueue)
  const nextWs = takeFrom(wsQueue)

  let ticks = 0
  const sampler = setInterval(() => {
    if (exit === undefined) rssPeak = Math.max(rssPeak, rssMiB(tollgate.pid))
    if (++ticks % 10 === 0)
      process.stdout.write(`  ${sentHttp + sentWs} bodies sent, ${findings.length} findings\n`)
  }, 1_000)

  async function httpWorker(): Promise<void> {
    for (let index = nextHttp(); index !== undefined; index = nextHttp()) {
      const body = fuzzBody(index, httpOptions)
      tally(kinds, body.kind)
      inFlight.add(body)
      sentHttp++
      const origin = `http #${index} (${body.kind}): ${preview(body)}`
      try {
        const response = await request(tollgate.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: body.body,
          dispatcher,
        })
        const text = await response.body.text()
        tally(statuses, String(response.statusCode))
        if (response.statusCode >= 500) {
          findings.push({
            type: 'status',
            origin,
            detail: `HTTP ${response.statusCode}: ${text.slice(0, 300)}`,
          })
        }
        if (text !== '') note(text, origin)
      } catch (err) {
        // a body over the limit is answered 413 before it is all sent: the server may close first
        if (Buffer.byteLength(body.body) > maxBodyBytes) {
          const code = (err as { code?: string }).code ?? (err as Error).message
          tally(statuses, `413 expected, connection closed while the client was still sending (${code})`)
        } else findings.push({ type: 'no answer', origin, detail: (err as Error).message })
      }
      inFlight.delete(body)
    }
  }

  async function socketWorker(): Promise<void> {
    let index = nextWs()
    while (index !== undefined) {
      const ws = new WebSocket(wsUrl)
      await new Promise((resolve, reject) => {
        ws.once('open', resolve)
        ws.once('error', reject)
      })
      let owed = 0
      let wake: (() => void) | undefined
      let closedBy: string | undefined
      ws.on('message', (data) => {
        const text = data.toString()
        if (text.includes('"method":"eth_subscription"') && !text.includes('"id"')) return
        owed--
        note(text, `ws, one of #${wsRecent.map((body) => `${body.index} (${body.kind})`).join(', #')}`)
        wake?.()
      })
      ws.on('close', (code, reason) => {
        closedBy = `${code} ${reason.toString()}`
        wake?.()
      })
      /** Waits for answers (or the socket's end), at most `timeoutMs`. */
      const waitUntil = async (check: () => boolean, timeoutMs = 60_000) => {
        const timer = setTimeout(() => wake?.(), timeoutMs)
        const until = performance.now() + timeoutMs
        while (!check() && closedBy === undefined && performance.now() < until) {
          await new Promise<void>((resolve) => (wake = resolve))
        }
        clearTimeout(timer)
      }
      for (let frames = 0; frames < framesPerSocket && index !== undefined; index = nextWs()) {
        const body = fuzzBody(index, wsOptions)
        tally(kinds, body.kind)
        if (Buffer.byteLength(body.body) > maxFrameBytes) {
          skippedFrames++
          continue
        }
        await waitUntil(() => owed < socketWindow)
        if (closedBy !== undefined || owed >= socketWindow) break
        if (expectsAnswer(body.body, maxJsonDepth)) owed++
        wsRecent.push(body)
        if (wsRecent.length > socketWindow * socketCount) wsRecent.shift()
        ws.send(body.body, { binary: typeof body.body !== 'string' })
        sentWs++
        frames++
      }
      await waitUntil(() => owed <= 0)
      const where = `ws, up to #${wsRecent.at(-1)?.index}`
      if (closedBy !== undefined) findings.push({ type: 'closed', origin: where, detail: closedBy })
      else if (owed > 0) findings.push({ type: 'missing answers', origin: where, detail: String(owed) })
      ws.close()
      if (owed > 0) return
    }
  }

  await Promise.all([
    ...Array.from({ length: connections }, httpWorker),
    ...Array.from({ length: socketCount }, socketWorker),
  ])
  clearInterval(sampler)
  const elapsedSeconds = (performance.now() - started) / 1_000

  const alive = exit === undefined && isAlive(tollgate.pid)
  const validAfter =
    alive && nodeDeath === undefined ? await checkValidCalls(tollgate.url, wsUrl, counterCall) : 'not checked'
  const heapAfterRun = alive ? await heapUsedMb(tollgate.origin) : Number.NaN
  const settle = alive ? await settleRss(tollgate.pid, rssBefore) : { rss: Number.NaN, waitedSeconds: 0 }
  const heapAfter = alive ? await heapUsedMb(tollgate.origin) : Number.NaN

  const count = (type: FuzzFinding['type']) => findings.filter((finding) => finding.type === type).length
  const fivexx = count('status')
  const gatewayInternal = count('internal')
  const lines = [
    `Recorded ${new Date().toISOString()} with \`npm run bench:fuzz -- --record\` (FUZZ_SEED=${seed}, FUZZ_BODIES=${total}), node ${process.version}.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| bodies sent | ${(sentHttp + sentWs).toLocaleString('en-US')} of ${indices.length.toLocaleString('en-US')} (${sentHttp.toLocaleString('en-US')} HTTP, ${sentWs.toLocaleString('en-US')} WebSocket; ${skippedFrames} frames over \`websocket.maxFrameBytes\` not sent) in ${elapsedSeconds.toFixed(0)} s |`,
    `| bodies by kind | ${[...kinds].map(([kind, n]) => `${kind} ${n.toLocaleString('en-US')}`).join(', ')} |`,
    `| HTTP statuses | ${[...statuses]
      .sort()
      .map(([status, n]) => `${status}: ${n.toLocaleString('en-US')}`)
      .join(', ')} |`,
    `| answers with status >= 500 | ${fivexx} |`,
    `| the gateway's own -32603 (batch elements and WebSocket included) | ${gatewayInternal} |`,
    `| other findings (not JSON, no answer, socket closed, answers missing) | ${findings.length - gatewayInternal - fivexx} |`,
    `| results answered (calls the node served) | ${results.toLocaleString('en-US')} |`,
    `| JSON-RPC error codes answered | ${[...codes]
      .sort()
      .map(([code, n]) => `${code}: ${n.toLocaleString('en-US')}`)
      .join(', ')} |`,
    `| node errors passed through with -32603 | ${nodeInternal.size === 0 ? 'none' : [...nodeInternal].map(([message, n]) => `${n} × \`${message.slice(0, 80)}\``).join('; ')} |`,
    `| gateway process | ${alive ? 'alive' : `crashed (${exit ?? 'gone'})`} |`,
    `| the node behind it | ${nodeDeath ?? 'alive'} |`,
    `| valid calls afterwards (eth_chainId, eth_call; HTTP and WebSocket) | ${validAfter === true ? 'answered correctly' : validAfter} |`,
    `| RSS (MB) | ${mb(rssBefore)} before, ${mb(rssPeak)} peak, ${mb(settle.rss)} ${settle.waitedSeconds.toFixed(0)} s after the run: ${mb(settle.rss - rssBefore)} more, ${mb(settle.rss - rssBefore) <= 50 ? 'within' : 'NOT within'} 50 MB |`,
    `| V8 heap in use (MB) | ${heapBefore} before, ${heapAfterRun} right after the run, ${heapAfter} when the RSS was read |`,
  ]
  const table = lines.join('\n')
  process.stdout.write(`\n${table}\n`)
  // the first five of each kind, with what to replay them by
  for (const type of new Set(findings.map((finding) => finding.type))) {
    for (const finding of findings.filter((each) => each.type === type).slice(0, 5)) {
      process.stdout.write(`\nFINDING ${finding.type}\n  ${finding.origin}\n  ${finding.detail}\n`)
    }
  }
  if (record && only === undefined) recordResults(`${scan}\n\n${table}`)
  if (findings.length > 0 || !alive || nodeDeath || validAfter !== true) process.exitCode = 1
} finally {
  stopping = true
  await dispatcher.close()
  for (const each of children) each.kill('SIGTERM')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** MiB (what /proc reports) to whole MB. */
function mb(mib: number): number {
  return Math.round(mib * 1.048576)
}

function preview(body: FuzzBody): string {
  return typeof body.body === 'string' ? body.body.slice(0, 160) : `<${body.body.length} random bytes>`
}

function isAlive(pid: number | undefined): boolean {
  try {
    process.kill(pid as number, 0)
    return true
  } catch {
    return false
  }
}

/** eth_chainId and the demo contract's counter, over HTTP and WebSocket, equal to what anvil says. */
async function checkValidCalls(url: string, wsUrl: string, call: object): Promise<true | string> {
  const chainId = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })
  const ethCall = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_call', params: [call, 'latest'] })
  const expected = [
    '{"jsonrpc":"2.0","id":1,"result":"0x7a69"}',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      result: (JSON.parse(await post(anvil.url, ethCall)) as { result: string }).result,
    }),
  ]
  const overHttp = [await post(url, chainId), await post(url, ethCall)]
  const ws = new WebSocket(wsUrl)
  const overWs = await new Promise<string[]>((resolve, reject) => {
    const answers: string[] = []
    ws.once('error', reject)
    ws.on('message', (data) => {
      answers.push(data.toString())
      if (answers.length === 2) resolve(answers.sort())
    })
    ws.once('open', () => {
      ws.send(chainId)
      ws.send(ethCall)
    })
  })
  ws.close()
  for (const [how, answers] of [
    ['HTTP', overHttp],
    ['WebSocket', overWs],
  ] as const) {
    if (JSON.stringify(answers) !== JSON.stringify(expected)) return `wrong over ${how}: ${answers.join(' ')}`
  }
  return true
}

async function post(url: string, body: string): Promise<string> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher,
  })
  return response.body.text()
}

/**
 * Polls the RSS every 500 ms until it is back within 50 MB of `beforeMiB`, for at most 180 s. An
 * idle Node process returns its heap only when V8's memory reducer runs a full collection, which
 * can take a minute or more after the last request; a leak would never come back.
 */
async function settleRss(pid: number | undefined, beforeMiB: number) {
  const started = performance.now()
  let rss = rssMiB(pid)
  while (mb(rss - beforeMiB) > 50 && performance.now() - started < 180_000) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    rss = rssMiB(pid)
  }
  return { rss, waitedSeconds: (performance.now() - started) / 1_000 }
}

/** The V8 heap in use, in MB, from the gateway's /metrics (prom-client's default process metrics). */
async function heapUsedMb(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text()
  const line = text.split('\n').find((each) => each.startsWith('nodejs_heap_size_used_bytes '))
  return Math.round(Number(line?.split(' ')[1]) / 1e6)
}

function recordResults(section: string): void {
  const file = 'bench/RESULTS.md'
  const text = readFileSync(file, 'utf8')
  const start = text.indexOf('<!-- fuzz:start -->')
  const end = text.indexOf('<!-- fuzz:end -->')
  if (start === -1 || end === -1) throw new Error(`${file} has no fuzz:start / fuzz:end markers`)
  writeFileSync(file, `${text.slice(0, start)}<!-- fuzz:start -->\n${section}\n${text.slice(end)}`)
}
