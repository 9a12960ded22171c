import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { GatewayProcess } from './helpers/gatewayProcess.ts'
import {
  anotherClientServed,
  mib,
  neverReads,
  readFigures,
  startKeyedGateway,
  stopAll,
  watchGrowth,
} from './helpers/hostileClients.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { until } from './helpers/until.ts'

/** Code that returns 8 MiB of zeros: its eth_call answer is a 16 MB hex string. */
const returns8MiB = '0x628000006000f3'
/** A call answering 16 MB, each `index` to a contract of its own (no two calls share a load). */
const bigCall = (index = 0) => {
  // past the precompiles' addresses
  const contract = `0x${(0x1000 + index).toString(16).padStart(40, '0')}`
  return rpcBody('eth_call', [
    { to: contract, gas: '0x10000000' },
    'latest',
    { [contract]: { code: returns8MiB } },
  ])
}

/** Code that returns 3 MiB of zeros: its eth_call answer, 6 MB of hex, is kept by the cache. */
const returns3MiB = '0x623000006000f3'
/** A call answering 6 MB, kept by the cache once asked: the gateway's own answer from then on. */
const keptCall = (index: number) => {
  const contract = `0x${(0x2000 + index).toString(16).padStart(40, '0')}`
  return rpcBody('eth_call', [
    { to: contract, gas: '0x10000000' },
    'latest',
    { [contract]: { code: returns3MiB } },
  ])
}

/**
 * Answers held in memory are bounded whatever clients do (gateway processes in front of a real
 * anvil, their resident memory read from /proc, what they hold from their /metrics): answers nobody
 * reads, a batch of huge answers, and a client that never takes its answer; another client is served
 * meanwhile, and what was held is all given back.
 */
describe('hostile clients: answers held in memory are bounded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-answers-'))
  let anvil: Anvil
  let gateway: GatewayProcess
  let endpoint: string
  /** A second key of `gateway`. */
  let otherEndpoint: string
  /** A second gateway with room for one large answer, that drops a client not taking it within 10 s. */
  let strict: GatewayProcess
  let strictEndpoint: string
  const sockets: Socket[] = []

  before(async () => {
    anvil = await startAnvil()
    let endpoints: string[]
    // the node makes 40 answers of 16 MB at once: on a busy machine, longer than the default 30 s
    const slowNode = { timeoutMs: 120_000 }
    ;({ gateway, endpoint, endpoints } = await startKeyedGateway(dir, 'default', anvil.url, {}, 2, slowNode))
    otherEndpoint = endpoints[1] as string
    // eth_chainId kept by the cache: what another client asks while the node is busy
    await postJson(endpoint, rpcBody('eth_chainId'))
    ;({ gateway: strict, endpoint: strictEndpoint } = await startKeyedGateway(dir, 'strict', anvil.url, {
      maxAnswerBytes: 20 * mib,
      maxAnswerBytesInFlight: 20 * mib,
      // long enough for the node to make a second big answer while the first is held
      sendTimeoutMs: 10_000,
    }))
  })
  after(() => stopAll(sockets, [gateway, strict], anvil, dir))

  /** Once every request is over, the gateway holds no answer bytes: nothing was left taken. */
  async function nothingHeld(of: GatewayProcess): Promise<void> {
    await until(async () => (await readFigures(of)).answersInFlightBytes === 0, 'no answer bytes held')
  }

  it('40 clients that never read their 16 MB answers', async (t) => {
    const growth = watchGrowth(gateway.child.pid as number)
    const before = (await readFigures(gateway)).answers
    const path = new URL(endpoint).pathname
    for (let client = 0; client < 40; client++) {
      sockets.push(neverReads(gateway.url, path, JSON.stringify(bigCall(client))))
    }
    // served while the big calls are on their way, and again once they are all held or refused
    await anotherClientServed(endpoint, t)
    // each answered, whole or refused (503 once the process holds its bound of large answers)
    let answers = before
    await until(
      async () => {
        answers = (await readFigures(gateway)).answers
        return answers.total - before.total >= 40
      },
      'the 40 answers',
      120_000,
    )
    assert.ok(
      answers['5xx'] > before['5xx'],
      "some answers were refused: the bound (their key's share of it) was full",
    )
    await anotherClientServed(endpoint, t)
    const grewBytes = growth.stop()
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 256 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
    for (const socket of sockets.splice(0)) socket.destroy()
    await nothingHeld(gateway)
  })

  it('one batch of 40 calls answering 640 MB in all', async (t) => {
    const growth = watchGrowth(gateway.child.pid as number)
    const answer = await postJson(
      endpoint,
      Array.from({ length: 40 }, (_, id) => ({ ...bigCall(id), id })),
    )
    const grewBytes = growth.stop()
    assert.equal(answer.status, 200)
    const elements = answer.json as { result?: string; error?: { code: number; message: string } }[]
    assert.equal(elements.length, 40)
    // the answers that fit, whole, and -32003 for the rest: 32 MiB holds one 16 MB answer and a part
    const kinds = elements.map((element) => element.error?.message ?? `a result of ${element.result?.length}`)
    const results = elements.filter((element) => element.result?.length === 2 + 16 * mib)
    const tooLarge = elements.filter((element) => element.error?.code === -32003)
    // the calls' loads come in at once: some may find the process's bound full before the batch's
    const busy = elements.filter((element) => element.error?.code === -32005)
    assert.equal(results.length + tooLarge.length + busy.length, 40, JSON.stringify(kinds))
    assert.ok(results.length <= 1, JSON.stringify(kinds))
    assert.match(tooLarge[0]?.error?.message ?? '', /^response too large/)
    t.diagnostic(`resident memory grew by ${Math.round(grewBytes / mib)} MiB`)
    assert.ok(grewBytes < 256 * mib, `grew by ${Math.round(grewBytes / mib)} MiB`)
    await anotherClientServed(endpoint, t)
    await nothingHeld(gateway)
  })

  it('a client that does not take its large answer is dropped after server.sendTimeoutMs, freeing what it held', async () => {
    const sent = (await readFigures(strict)).answers
    const unread = neverReads(strict.url, new URL(strictEndpoint).pathname, JSON.stringify(bigCall(1)))
    sockets.push(unread)
    await until(
      async () => (await readFigures(strict)).answers['2xx'] > sent['2xx'],
      'the unread answer sent',
      60_000,
    )
    // while the unread answer is held, the process has no room for another large one
    const refused = await postJson(strictEndpoint, bigCall(2))
    assert.equal(refused.status, 503)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.deepEqual((refused.json as { error: unknown }).error, {
      code: -32005,
      message: 'server busy, try again later',
    })
    // the gateway drops it (the unread client, paused, sees nothing): what it held is free again
    await until(
      async () => (await readFigures(strict)).answersInFlightBytes === 0,
      'the unread answer dropped',
      60_000,
    )
    const served = await postJson(strictEndpoint, bigCall(3))
    assert.equal(served.status, 200)
    assert.equal((served.json as { result: string }).result.length, 2 + 16 * mib)
    await nothingHeld(strict)
  })

  it("one key's unread answers hold its share of the bound at most: another key's large answer goes meanwhile", async (t) => {
    const attackerCall = keptCall(1)
    const otherCall = keptCall(2)
    // both kept by the cache: from here on the gateway answers them, however busy the node
    assert.equal((await postJson(endpoint, attackerCall)).status, 200)
    assert.equal((await postJson(otherEndpoint, otherCall)).status, 200)
    const before = (await readFigures(gateway)).answers
    const path = new URL(endpoint).pathname
    const unread = Array.from({ length: 40 }, () =>
      neverReads(gateway.url, path, JSON.stringify(attackerCall)),
    )
    sockets.push(...unread)
    let figures = await readFigures(gateway)
    await until(async () => {
      figures = await readFigures(gateway)
      return figures.answers.total - before.total >= 40
    }, 'the 40 answers')
    const heldBytes = figures.answersInFlightBytes
    t.diagnostic(
      `40 unread 6 MB answers: ${figures.answers['2xx'] - before['2xx']} held (${(heldBytes / mib).toFixed(1)} MiB), ${figures.answers['5xx'] - before['5xx']} refused`,
    )
    // their key's share of the 64 MiB bound: a half (at least one answer of server.maxAnswerBytes)
    assert.ok(heldBytes <= 32 * mib, `held ${heldBytes} bytes`)
    assert.ok(figures.answers['5xx'] > before['5xx'], "some were refused: their key's share was full")
    const served = await postJson(otherEndpoint, otherCall)
    assert.equal(served.status, 200, served.text.slice(0, 200))
    assert.equal((served.json as { result: string }).result.length, 2 + 6 * mib)
    for (const socket of sockets.splice(0)) socket.destroy()
    await nothingHeld(gateway)
  })
})
