import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { stringify } from 'yaml'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './gatewayProcess.ts'
import { postJson, rpcBody } from './postJson.ts'
import { readMetrics } from './readMetrics.ts'

export const mib = 1024 * 1024

/**
 * A gateway process in front of `upstream` on SQLite in `dir`, with `server` settings over the
 * defaults, and `keyCount` keys on the team plan: `endpoint` is the first's, `endpoints` all of them.
 */
export async function startKeyedGateway(
  dir: string,
  name: string,
  upstream: string,
  server: Record<string, unknown> = {},
  keyCount = 1,
  upstreams: Record<string, unknown> = {},
): Promise<{ gateway: GatewayProcess; endpoint: string; endpoints: string[] }> {
  const configFile = join(dir, `${name}.yaml`)
  writeFileSync(
    configFile,
    stringify({
      server: { host: '127.0.0.1', port: 0, ...server },
      storage: { sqlite: join(dir, `${name}.db`) },
      networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: upstream }] }],
      upstreams,
      gas: { enabled: false },
      // its failures' reasons (a 5xx answer's, logged as a warning) are in its output for a test to show
      log: { level: 'warn' },
    }),
  )
  const keys = Array.from({ length: keyCount }, () => {
    const created = execFileSync(
      process.execPath,
      [bin, 'keys', 'create', '--config', configFile, '--plan', 'team', '--json'],
      { encoding: 'utf8' },
    )
    return (JSON.parse(created) as { key: string }).key
  })
  const gateway = await startGatewayProcess(['start', '--config', configFile])
  const endpoints = keys.map((key) => `${gateway.url}/v3/${key}`)
  return { gateway, endpoint: endpoints[0] as string, endpoints }
}

/** Samples a process's resident memory (from /proc) until stopped: the most it grew by since the start. */
export function watchGrowth(pid: number): { stop(): number } {
  const residentBytes = () =>
    Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024
  const start = residentBytes()
  let peak = start
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes())
  }, 10)
  return {
    stop() {
      clearInterval(timer)
      return Math.max(peak, residentBytes()) - start
    },
  }
}

/** A client that sends one request to `url`'s host and never reads a byte of the answer. */
export function neverReads(url: string, path: string, body: string): Socket {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  socket.on('error', () => undefined)
  socket.pause()
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  return socket
}

/**
 * A client that sends a request declaring `declaredBytes` of body, every byte but the last, then
 * stalls. `answered` resolves with the status line the gateway answers it with ('' if it closes
 * unanswered).
 */
export function stallsUpload(
  url: string,
  path: string,
  declaredBytes: number,
  headers: Record<string, string> = {},
): { socket: Socket; answered: Promise<string> } {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  socket.on('error', () => undefined)
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${extra}` +
      `content-length: ${declaredBytes}\r\n\r\n`,
  )
  socket.write(Buffer.alloc(declaredBytes - 1, 0x20))
  const answered = new Promise<string>((resolve) => {
    let received = ''
    socket.on('data', (data) => {
      received += data.toString('latin1')
      const lineEnd = received.indexOf('\r\n')
      if (lineEnd !== -1) resolve(received.slice(0, lineEnd))
    })
    socket.on('close', () => resolve(''))
  })
  return { socket, answered }
}

export type GatewayFigures = {
  /** JSON-RPC answers over HTTP so far, by status class. */
  answers: { total: number; '2xx': number; '5xx': number }
  answersInFlightBytes: number
  bodiesInFlightBytes: number
}

/** What the gateway's /metrics says now of its answers and of what it holds. */
export async function readFigures(gateway: GatewayProcess): Promise<GatewayFigures> {
  const metrics = await readMetrics(gateway.url)
  const read = (name: string, labels?: Record<string, string>) => metrics.value(name, labels) ?? 0
  const byClass = (statusClass: string) =>
    read('tollgate_http_rpc_responses_total', { status_class: statusClass })
  return {
    answers: {
      total: byClass('2xx') + byClass('4xx') + byClass('5xx'),
      '2xx': byClass('2xx'),
      '5xx': byClass('5xx'),
    },
    answersInFlightBytes: read('tollgate_answers_in_flight_bytes'),
    bodiesInFlightBytes: read('tollgate_bodies_in_flight_bytes'),
  }
}

/** Ends what a test of hostile clients started: its client sockets, its gateways (SIGTERM), its node and dir. */
export async function stopAll(
  sockets: Socket[],
  gateways: (GatewayProcess | undefined)[],
  node: { stop(): Promise<void> } | undefined,
  dir: string,
): Promise<void> {
  for (const socket of sockets) socket.destroy()
  for (const gateway of gateways) {
    if (!gateway) continue
    gateway.child.kill('SIGTERM')
    await exited(gateway.child)
  }
  await node?.stop()
  rmSync(dir, { recursive: true, force: true })
}

/**
 * Another client's eth_chainId (kept by the cache after the first: the gateway's own answer, not the
 * node's, which the hostile clients may keep busy), answered while they hold what they hold; its
 * latency is reported, not asserted.
 */
export async function anotherClientServed(endpoint: string, t: TestContext): Promise<void> {
  const startedMs = performance.now()
  const answer = await postJson(endpoint, rpcBody('eth_chainId'))
  t.diagnostic(`another client answered in ${Math.round(performance.now() - startedMs)} ms`)
  assert.equal(answer.status, 200)
  assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
}
