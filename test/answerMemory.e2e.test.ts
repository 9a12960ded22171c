import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { until } from './helpers/until.ts'

const contract = `0x${'11'.repeat(20)}`
/** Code that returns 8 MiB of zeros: its eth_call answer is a 16 MB hex string. */
const returns8MiB = '0x628000006000f3'
const bigCall = rpcBody('eth_call', [
  { to: contract, gas: '0x10000000' },
  'latest',
  { [contract]: { code: returns8MiB } },
])
const mib = 1024 * 1024

/**
 * Memory is bounded whatever clients do (a gateway process in front of a real anvil, its resident
 * memory read from /proc): answers nobody reads, a batch of huge answers, and bodies sent to keys
 * that do not exist each grow it by a bounded amount, and another client is served meanwhile.
 */
describe('hostile clients: answers and bodies held in memory are bounded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-memory-'))
  let anvil: Anvil
  let gateway: GatewayProcess
  let endpoint: string
  /** A second gateway with room for one large answer, that drops a client not taking it within 1 s. */
  let strict: GatewayProcess
  let strictEndpoint: string
  const sockets: Socket[] = []

  /** A gateway process in front of the anvil, with `server` settings over the defaults, and a key. */
  async function startGateway(name: string, server: Record<string, unknown>) {
    const configFile = join(dir, `${name}.yaml`)
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0, ...server },
        storage: { sqlite: join(dir, `${name}.db`) },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: anvil.url }] }],
        cache: { enabled: false },
        gas: { enabled: false },
        log: { level: 'error' },
      }),
    )
    const created = execFileSync(
      process.execPath,
      [bin, 'keys', 'create', '--config', configFile, '--plan', 'team', '--json'],
      { encoding: 'utf8' },
    )
    const { key } = JSON.parse(created) as { key: string }
    const started = await startGatewayProcess(['start', '--config', configFile])
    return { started, endpoint: `${started.url}/v3/${key}` }
  }

  before(async () => {
    anvil = await startAnvil()
    ;({ started: gateway, endpoint } = await startGateway('default', {}))
    ;({ started: strict, endpoint: strictEndpoint } = await startGateway('strict', {
      maxAnswerBytes: 20 * mib,
      maxAnswerBytesInFlight: 20 * mib,
      sendTimeoutMs: 1_000,
    }))
  })
  after(async () => {
    for (const socket of sockets) socket.destroy()
    for (const each of [gateway, strict]) {
      if (!each) continue
      each.child.kill('SIGTERM')
      await exited(each.child)
    }
    await anvil?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The gateway process's resident memory. */
  function residentBytes(): number {
    const status = readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024
  }

  /** Samples the gateway's resident memory until stopped: the most it grew by since the start. */
  function watchGrowth(): { stop(): number } {
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

  /** A client that sends one request and never reads a byte of the answer. */
  function neverReads(path: string, body: string, to = gateway): Socket {
    const { port } = new URL(to.url)
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => undefined)
    socket.pause()
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    sockets.push(socket)
    return socket
  }

  /** Another client's cheap call, answered while the hostile ones hold what they hold. */
  async function anotherClientServed(): Promise<void> {
    const answer = await postJson(endpoint, rpcBody('eth_chainId'))
    assert.equal(answer.status, 200)
    assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
  }

  it('40 clients that never read their 16 MB answers', async (t) => {
    const growth = watchGrowth()
    const path = new URL(endpoint).pathname
    const answered = await answersSent()
    for (let client = 0; client < 40; client++) neverReads(path, JSON.stringify(bigCall))
    // each answered, whole or refused (503 once the process holds its bound of large answers)
    let statuses = answered
    await until(
      async () => {
        statuses = await answersSent()
        return statuses.total - answered.total >= 40
      },
      'the 40 answers',
      120_000,
    )
    assert.ok(statuses['5xx'] > answered['5xx'], 'some answers were refused: the process was full')
    await anotherClientServed()
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 256 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
    for (const socket of sockets.splice(0)) socket.destroy()
  })

  it('one batch of 40 calls answering 640 MB in all', async (t) => {
    const growth = watchGrowth()
    const answer = await postJson(
      endpoint,
      Array.from({ length: 40 }, (_, id) => ({ ...bigCall, id })),
    )
    const grewBytes = growth.stop()
    assert.equal(answer.status, 200)
    const elements = answer.json as { result?: string; error?: { code: number; message: string } }[]
    assert.equal(elements.length, 40)
    // the answers that fit, whole, and -32003 for the rest: 32 MiB holds one 16 MB answer and a part
    const kinds = elements.map((element) => element.error?.message ?? `a result of ${element.result?.length}`)
    const results = elements.filter((element) => element.result?.length === 2 + 16 * mib)
    const tooLarge = elements.filter((element) => element.error?.code === -32003)
    assert.equal(results.length + tooLarge.length, 40, JSON.stringify(kinds))
    assert.ok(results.length <= 1, JSON.stringify(kinds))
    assert.match(tooLarge[0]?.error?.message ?? '', /^response too large/)
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 256 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
    await anotherClientServed()
  })

  it('a client that does not take its large answer is dropped after server.sendTimeoutMs, freeing what it held', async () => {
    const sent = await answersSent(strict)
    const unread = neverReads(new URL(strictEndpoint).pathname, JSON.stringify(bigCall), strict)
    const dropped = new Promise((resolve) => unread.once('close', resolve))
    await until(
      async () => (await answersSent(strict))['2xx'] > sent['2xx'],
      'the unread answer sent',
      60_000,
    )
    // while the unread answer is held, the process has no room for another large one
    const refused = await postJson(strictEndpoint, bigCall)
    assert.equal(refused.status, 503)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.deepEqual((refused.json as { error: unknown }).error, {
      code: -32005,
      message: 'server busy, try again later',
    })
    await dropped
    const served = await postJson(strictEndpoint, bigCall)
    assert.equal(served.status, 200)
    assert.equal((served.json as { result: string }).result.length, 2 + 16 * mib)
    sockets.splice(sockets.indexOf(unread), 1)
  })

  /** 150 clients each sending a body of nearly 5 MiB to `path`, reading only once all are sent. */
  async function sendBodies(path: string): Promise<void> {
    const body = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"data":"0x${'00'.repeat(2 * mib)}"}]}`
    const closed: Promise<void>[] = []
    for (let client = 0; client < 150; client++) {
      const socket = neverReads(path, body)
      closed.push(new Promise((resolve) => socket.on('close', () => resolve())))
    }
    for (const socket of sockets) {
      socket.resume()
      socket.end()
    }
    await Promise.all(closed)
    sockets.splice(0)
  }

  it('150 clients sending nearly 5 MiB each to a key that does not exist', async (t) => {
    const growth = watchGrowth()
    // each is answered 401 from its headers and its connection closed, its body never read
    await sendBodies(`/v3/${'f'.repeat(32)}`)
    await anotherClientServed()
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 100 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
  })

  it('150 clients sending nearly 5 MiB each to a real key: bodies in flight are bounded', async (t) => {
    const growth = watchGrowth()
    const answered = await answersSent()
    await sendBodies(new URL(endpoint).pathname)
    const statuses = await answersSent()
    assert.ok(statuses['5xx'] > answered['5xx'], 'some bodies were refused: the process held its bound')
    await anotherClientServed()
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    // a body admitted is parsed (a string, the values it holds) and forwarded as well as held: a few
    // times the bound on bodies in flight (32 MiB)
    assert.ok(grewBytes < 256 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
  })

  /** The gateway's JSON-RPC answers so far, by status class (its /metrics). */
  async function answersSent(of = gateway): Promise<{ total: number; '2xx': number; '5xx': number }> {
    const text = await (await fetch(`${of.url}/metrics`)).text()
    const count = (statusClass: string) =>
      Number(
        new RegExp(`tollgate_http_rpc_responses_total\\{status_class="${statusClass}"\\} (\\d+)`).exec(
          text,
        )?.[1] ?? 0,
      )
    return { total: count('2xx') + count('4xx') + count('5xx'), '2xx': count('2xx'), '5xx': count('5xx') }
  }
})
