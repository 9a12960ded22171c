import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { WebSocket } from 'ws'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { GatewayProcess } from './helpers/gatewayProcess.ts'
import {
  anotherClientServed,
  mib,
  neverReads,
  readFigures,
  stallsUpload,
  startKeyedGateway,
  stopAll,
  watchGrowth,
} from './helpers/hostileClients.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { until } from './helpers/until.ts'

/** An eth_call of `calldataBytes` of calldata (to an account without code: its answer is `0x`). */
const callOf = (calldataBytes: number, id = 1) =>
  rpcBody('eth_call', [{ to: `0x${'22'.repeat(20)}`, data: `0x${'00'.repeat(calldataBytes)}` }, 'latest'], id)
/** The body of one such call: twice as long as its calldata (hex), and the envelope. */
const callWith = (calldataBytes: number) => JSON.stringify(callOf(calldataBytes))
/** Nearly 5 MiB. */
const heavyBody = callWith(2 * mib)
/** 1 MiB, which anvil still takes. */
const megabyteBody = callWith(mib / 2)
/** A batch of ten calls: about 300 KB. */
const batchBody = JSON.stringify(Array.from({ length: 10 }, (_, id) => callOf(15_000, id)))
/** What a gateway holds of a 5 MiB body stalled before its last byte: all but its first 64 KiB. */
const stalledUploadBytes = 5 * mib - 1 - 64 * 1024
/** What it holds of a 300 KB body so stalled. */
const filledUploadBytes = 300_000 - 1 - 64 * 1024
/** Each key's and each client address's share of the bound on bodies in flight: a quarter of 32 MiB. */
const shareBytes = 8 * mib

/**
 * Request bodies held in memory are bounded whatever clients send (gateway processes in front of a
 * real anvil): bodies to keys that do not exist are never read; bodies to a real key, over HTTP and
 * as WebSocket messages, are held within one bound for the whole process.
 */
describe('hostile clients: request bodies held in memory are bounded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bodies-'))
  let anvil: Anvil
  let gateway: GatewayProcess
  let endpoint: string
  /** Three keys of `gateway`, the first `endpoint`. */
  let endpoints: string[]
  /** A second gateway whose bound on bodies in flight holds one 5 MiB body and a little more. */
  let strict: GatewayProcess
  let strictEndpoint: string
  const sockets: Socket[] = []

  before(async () => {
    anvil = await startAnvil()
    ;({ gateway, endpoint, endpoints } = await startKeyedGateway(
      dir,
      'default',
      anvil.url,
      {
        // this machine as a proxy: a request with X-Forwarded-For counts as from the address it names
        trustedProxies: ['127.0.0.1'],
        // three times the default: the first stalled upload stays held while the 300 KB ones fill the
        // share one by one and another client is served, on a busy machine (at 10 s, seen once in a
        // whole run: it was dropped mid-fill, so the next upload was held in its place, not refused)
        bodyStallTimeoutMs: 15_000,
      },
      3,
    ))
    ;({ gateway: strict, endpoint: strictEndpoint } = await startKeyedGateway(dir, 'strict', anvil.url, {
      maxBodyBytesInFlight: 5.5 * mib,
      // its slow body waits on the WebSocket's messages, however slowly they come
      bodyStallTimeoutMs: 60_000,
    }))
  })
  after(() => stopAll(sockets, [gateway, strict], anvil, dir))

  /** 150 clients each sending a body of nearly 5 MiB to `path`, reading only once all are sent. */
  async function sendBodies(path: string): Promise<void> {
    const closed: Promise<void>[] = []
    for (let client = 0; client < 150; client++) {
      const socket = neverReads(gateway.url, path, heavyBody)
      sockets.push(socket)
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
    const growth = watchGrowth(gateway.child.pid as number)
    // each is answered 401 from its headers and its connection closed, its body never read
    await sendBodies(`/v3/${'f'.repeat(32)}`)
    await anotherClientServed(endpoint, t)
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 100 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
  })

  it('150 clients sending nearly 5 MiB each to a real key: bodies in flight are bounded', async (t) => {
    const growth = watchGrowth(gateway.child.pid as number)
    const before = (await readFigures(gateway)).answers
    await sendBodies(new URL(endpoint).pathname)
    const after = await readFigures(gateway)
    assert.ok(after.answers['5xx'] > before['5xx'], 'some bodies were refused: the process held its bound')
    await anotherClientServed(endpoint, t)
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    // a body admitted is parsed (a string, the values it holds) and forwarded as well as held: a few
    // times the bound on bodies in flight (32 MiB), and resident memory keeps what V8 freed but has
    // not given back (seen 110-290 MiB across runs and machines). Unbounded, the 150 bodies alone
    // would be 750 MiB, several times that parsed and forwarded
    assert.ok(grewBytes < 384 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
    await until(async () => (await readFigures(gateway)).bodiesInFlightBytes === 0, 'no body bytes held')
  })

  it('WebSocket messages share the bound with HTTP bodies: one that does not fit is refused, free', async () => {
    // an HTTP body of 5 MiB, all but its last byte sent: held while it is being read
    const slow = connect(Number(new URL(strict.url).port), '127.0.0.1')
    sockets.push(slow)
    slow.on('error', () => undefined)
    const declared = 5 * mib
    slow.write(
      `POST ${new URL(strictEndpoint).pathname} HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
        `content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
    )
    slow.write(Buffer.alloc(declared - 1, 0x20))
    await until(async () => (await readFigures(strict)).bodiesInFlightBytes > 4 * mib, 'the slow body held')

    const socket = new WebSocket(`${strictEndpoint.replace('http', 'ws').replace('/v3/', '/ws/v3/')}`)
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    const answer = () =>
      new Promise<unknown>((resolve) =>
        socket.once('message', (data) => resolve(JSON.parse(data.toString()))),
      )
    let answered = answer()
    socket.send(megabyteBody)
    assert.deepEqual(await answered, {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32005, message: 'server busy, try again later' },
    })
    // a small message goes though the bound is full
    answered = answer()
    socket.send(JSON.stringify(rpcBody('eth_chainId', [], 2)))
    assert.deepEqual(await answered, { jsonrpc: '2.0', id: 2, result: '0x7a69' })

    slow.destroy()
    await until(async () => (await readFigures(strict)).bodiesInFlightBytes === 0, 'the slow body let go')
    answered = answer()
    socket.send(megabyteBody)
    assert.deepEqual(await answered, { jsonrpc: '2.0', id: 1, result: '0x' })
    socket.close()
  })

  /**
   * One attacker filling what its uploads count against (`pathOf(index)` names the `index`th upload's
   * key; `headers` go with each), every upload sent but its last byte, then stalled: eight of 5 MiB
   * at once (seven refused, 503, as they pass the share; one held whole), then 300 KB ones one by one
   * until one is refused. While they are held `meanwhile` runs; then each is dropped for stalling
   * (408) and what they held is given back.
   */
  async function stallUploads(
    pathOf: (index: number) => string,
    headers: Record<string, string>,
    meanwhile: () => Promise<void>,
    t: TestContext,
  ): Promise<void> {
    const uploads = Array.from({ length: 8 }, (_, index) =>
      stallsUpload(gateway.url, pathOf(index), 5 * mib, headers),
    )
    sockets.push(...uploads.map((upload) => upload.socket))
    /** Each upload answered so far, with the status line it was answered with. */
    const answered = new Map<unknown, string>()
    const watch = (upload: (typeof uploads)[0]) =>
      void upload.answered.then((line) => answered.set(upload, line))
    uploads.forEach(watch)
    let heldBytes = 0
    await until(async () => {
      heldBytes = (await readFigures(gateway)).bodiesInFlightBytes
      return answered.size === 7 && heldBytes >= stalledUploadBytes
    }, 'seven uploads refused and one held')
    const held = uploads.filter((upload) => !answered.has(upload))
    for (let index = 0; index < 64; index++) {
      const was = heldBytes
      const upload = stallsUpload(gateway.url, pathOf(index), 300_000, headers)
      sockets.push(upload.socket)
      watch(upload)
      await until(async () => {
        heldBytes = (await readFigures(gateway)).bodiesInFlightBytes
        return answered.has(upload) || heldBytes >= was + filledUploadBytes
      }, 'a 300 KB upload held or refused')
      if (answered.has(upload)) {
        assert.match(answered.get(upload) ?? '', /^HTTP\/1\.1 503 /, 'the last 300 KB upload refused')
        break
      }
      held.push(upload)
    }
    const heldMs = performance.now()
    t.diagnostic(`held of the stalled uploads: ${(heldBytes / mib).toFixed(2)} MiB (${held.length} uploads)`)
    assert.ok(heldBytes <= shareBytes, `held ${heldBytes} bytes, more than a share`)

    await meanwhile()
    assert.deepEqual(
      held.flatMap((upload) => answered.get(upload) ?? []),
      [],
      'every upload held is still held once the others were served',
    )
    for (const upload of held) assert.match(await upload.answered, /^HTTP\/1\.1 408 /)
    t.diagnostic(`the held uploads dropped ${Math.round(performance.now() - heldMs)} ms after they were held`)
    await until(async () => (await readFigures(gateway)).bodiesInFlightBytes === 0, 'their bytes given back')
  }

  /** Sixteen 300 KB batches at once to `to` (with `headers`): every one answered 200, every call `0x`. */
  async function batchesServed(to: string, headers: Record<string, string>, t: TestContext): Promise<void> {
    const tookMs: number[] = []
    const answers = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const startedMs = performance.now()
        const answer = await postJson(to, batchBody, { 'content-type': 'application/json', ...headers })
        tookMs.push(performance.now() - startedMs)
        return answer
      }),
    )
    // what the gateway said of a failure (seen once in CI: every call 'no upstream available'),
    // without its refusals of the uploads
    const said = () => {
      const lines = gateway.output().split('\n')
      const others = lines.filter((line) => !line.includes('"logDetails":"request bodies in flight"'))
      return `; the gateway logged: ${others.slice(-12).join('\n').slice(-3000)}`
    }
    for (const answer of answers) {
      assert.equal(answer.status, 200, `${answer.text.slice(0, 200)}${said()}`)
      const served = Array.from({ length: 10 }, (_, id) => ({ jsonrpc: '2.0', id, result: '0x' }))
      assert.deepEqual(answer.json, served, `${answer.text.slice(0, 200)}${said()}`)
    }
    t.diagnostic(
      `16 batches of ${Math.round(batchBody.length / 1000)} KB served; slowest ${Math.round(Math.max(...tookMs))} ms`,
    )
  }

  /** The answer to one message of `body` on a new WebSocket to `to`'s key. */
  async function messageAnswered(to: string, body: string): Promise<unknown> {
    const { socket, messages } = await openSocket(to.replace('http', 'ws').replace('/v3/', '/ws/v3/'))
    socket.send(body)
    await until(() => messages.length > 0, 'the answer')
    socket.close()
    return messages[0]
  }

  it("one key's eight stalled 5 MiB uploads hold its share at most: another key's 300 KB batches are all served", async (t) => {
    const [attacker, other] = endpoints as [string, string]
    const path = new URL(attacker).pathname
    await stallUploads(
      () => path,
      {},
      async () => {
        await batchesServed(other, {}, t)
        // WebSocket messages count in their key's share as HTTP bodies do
        assert.deepEqual(await messageAnswered(attacker, megabyteBody), {
          jsonrpc: '2.0',
          id: 1,
          error: { code: -32005, message: 'server busy, try again later' },
        })
        assert.deepEqual(await messageAnswered(other, megabyteBody), { jsonrpc: '2.0', id: 1, result: '0x' })
      },
      t,
    )
  })

  it("one address's stalled uploads on two keys hold the address's share at most: another address is served", async (t) => {
    const [first, other, second] = endpoints as [string, string, string]
    // uploads on each of two keys in turn: their keys' shares would hold twice what the address's does
    const paths = [new URL(first).pathname, new URL(second).pathname]
    await stallUploads(
      (index) => paths[index % 2] as string,
      { 'x-forwarded-for': '203.0.113.7' },
      () => batchesServed(other, { 'x-forwarded-for': '198.51.100.9' }, t),
      t,
    )
  })
})
