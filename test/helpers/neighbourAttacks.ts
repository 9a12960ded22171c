import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { getMethodSpec } from '../../src/methods/methodTable.ts'
import { mib, readFigures } from './hostileClients.ts'
import { endlessCode } from './measureEndlessGas.ts'
import { rpcBody } from './postJson.ts'
import { readMetrics } from './readMetrics.ts'
import { sendBigBatches } from './sendBigBatches.ts'
import type { Tally } from './startCountingProxy.ts'
import {
  attackerCallsInFlight,
  attackerHeaders,
  attackerRate,
  type Neighbourhood,
  neighbourHeaders,
} from './startNeighbourhood.ts'
import { startStalledUploads } from './startStalledUploads.ts'
import { until } from './until.ts'

export const price = (method: string) => getMethodSpec(method).costCredits
/** A batch's envelope, beyond its calls (docs/plans.md). */
export const envelopeCredits = 80

/** What every request that runs it holds: how the counting proxy tells them apart. */
const endlessMarker = endlessCode.slice(2)
/** Each of the attacker's eth_getLogs ranges: refused, halved twice, then four chunks of 100 blocks. */
const queryBlocks = 400n

const hex = (value: bigint | number) => `0x${value.toString(16)}`

/**
 * The attacks of issue #41, each run by the attacker's key of `hood` and checked against what
 * docs/plans.md says it is charged; `report` gets what each saw.
 */
export function createAttacks(hood: Neighbourhood, report: string[]) {
  const { gateway, attacker, call } = hood
  let nextQuery = 0
  let nextTarget = 0x1000

  /**
   * Eight uploads of 5 MiB on the attacker's key, each sent but its last byte, then stalled (from a
   * process of their own): one is held within the key's share, seven refused 503 (free); `whileHeld`
   * runs while it is held, which is then dropped 408 for stalling (5 credits),
   * `server.bodyStallTimeoutMs` after its last bytes.
   */
  async function stalledUploads(whileHeld: () => Promise<void> = async () => undefined): Promise<void> {
    const uploads = startStalledUploads(gateway.url, `/v3/${attacker}`, 8, 5 * mib, attackerHeaders)
    hood.children.push(uploads.child)
    const { answered } = uploads
    await until(() => answered.length === 7, 'seven uploads refused')
    await until(
      async () => (await readFigures(gateway)).bodiesInFlightBytes >= 4 * mib,
      'the eighth upload held',
    )
    await whileHeld()
    assert.equal(answered.length, 7, 'the eighth upload still held once the neighbour was served')
    await uploads.closed
    // a refusal may reach a client still sending its body as a reset, before the status line
    const statuses = answered.map((line) => line.split(' ')[1] ?? 'reset')
    assert.deepEqual(
      statuses.slice(0, 7).filter((status) => status !== '503' && status !== 'reset'),
      [],
    )
    assert.equal(statuses[7], '408', 'the held upload dropped for stalling')
  }

  /** The neighbour's four 300 KB batches of ten eth_calls, one after another: each answered whole. */
  async function neighbourBatches(): Promise<void> {
    const batch = Array.from({ length: 10 }, (_, id) =>
      rpcBody('eth_call', [{ to: `0x${'22'.repeat(20)}`, data: `0x${'00'.repeat(15_000)}` }, 'latest'], id),
    )
    for (let sent = 0; sent < 4; sent++) {
      const answer = await call('', hood.neighbour, neighbourHeaders, batch)
      assert.equal(answer.status, 200, answer.text.slice(0, 200))
      assert.deepEqual(
        answer.json,
        batch.map(({ id }) => ({ jsonrpc: '2.0', id, result: '0x' })),
      )
    }
  }

  /**
   * `clients` clients sending 400-block eth_getLogs queries on the attacker's key for `sendingMs`,
   * on the network whose upstream refuses ranges over 100 blocks (each query with an address of its
   * own: no two share a chunk the cache could answer). Each node call that causes is charged at
   * eth_getLogs' price (docs/plans.md); `alone` (nothing else spends the key's rate), they are no
   * more than its rate pays for.
   */
  async function wideLogs(clients: number, sendingMs: number, alone: boolean): Promise<void> {
    const logCalls = () => hood.limiter.requests.filter((request) => request.method === 'eth_getLogs').length
    const callsBefore = logCalls()
    const answers: { status: number; charged: number; logs: boolean }[] = []
    const startedMs = performance.now()
    const client = async () => {
      while (performance.now() - startedMs < sendingMs) {
        const query = nextQuery++
        const from = 1n + ((BigInt(query) * 37n) % (hood.head - queryBlocks))
        const filter = {
          fromBlock: hex(from),
          toBlock: hex(from + queryBlocks - 1n),
          address: `0x${(0xa11ce0000 + query).toString(16).padStart(40, '0')}`,
        }
        const answer = await call('/logs', attacker, attackerHeaders, rpcBody('eth_getLogs', [filter]))
        answers.push({
          status: answer.status,
          charged: Number(answer.headers.get('x-credits-charged')),
          logs: Array.isArray(answer.json.result),
        })
      }
    }
    await Promise.all(Array.from({ length: clients }, client))
    const elapsedMs = performance.now() - startedMs
    const logsPrice = price('eth_getLogs')
    const charged = answers.reduce((sum, answer) => sum + answer.charged, 0)
    // chunks still on their way when an answer went (a 429 part-way) reach the upstream after it
    await until(
      () => (logCalls() - callsBefore) * logsPrice >= charged,
      `${charged} credits of upstream calls`,
    )
    const upstreamCalls = logCalls() - callsBefore
    const free = upstreamCalls - charged / logsPrice
    const failed = answers.filter((answer) => answer.status >= 500).length
    // a full bucket (one second's worth) and its refill meanwhile
    const paidFor = Math.floor((attackerRate + (attackerRate * elapsedMs) / 1000) / logsPrice)
    const statuses = answers.map((answer) => answer.status)
    report.push(
      `  eth_getLogs: ${answers.length} queries, ${answers.filter((answer) => answer.logs).length} answered, ` +
        `${statuses.filter((status) => status === 429).length} 429, ${failed} 5xx; ${upstreamCalls} upstream ` +
        `calls (${paidFor} paid for by the rate alone), ${charged} credits`,
    )
    if (alone)
      assert.ok(upstreamCalls <= paidFor + free, `${upstreamCalls} upstream eth_getLogs, ${paidFor} paid for`)
    // a chunk that failed without the node's answer is free: at most the four a split has in flight
    assert.ok(free <= 4 * failed, `${free} upstream calls not charged`)
    assert.ok(
      statuses.every((status) => status === 200 || status === 429 || status === 504),
      `answered, refused by the rate, or out of time: ${statuses}`,
    )
    assert.ok(
      answers.every((answer) => !answer.logs || answer.charged >= 2 * logsPrice),
      'each answer charged for its chunks',
    )
  }

  /** Counts the endless calls that reach the node from now on. */
  const watchEndless = (): Tally => hood.proxy.watch(endlessMarker)

  /**
   * `batches` batches of 40 eth_calls each running endless code through a state override (a new
   * address each: none is another's to the cache), one after another, on the attacker's key: at
   * most attackerCallsInFlight of each reach the node, once each, and each of those is charged its
   * price (the node worked on it while it answered the neighbour); the others are refused 429 for
   * nothing.
   */
  async function endlessCalls(batches: number, endless = watchEndless()): Promise<void> {
    let charged = 0
    for (let sent = 0; sent < batches; sent++) {
      const batch = Array.from({ length: 40 }, (_, id) => {
        const to = `0x${(nextTarget++).toString(16).padStart(40, '0')}`
        return rpcBody(
          'eth_call',
          [{ to, gas: hex(hood.endlessGas) }, 'latest', { [to]: { code: endlessCode } }],
          id,
        )
      })
      let answer = await call('', attacker, attackerHeaders, batch)
      // refused whole by the key's rate (spent by another attack): sent again when it says, as a
      // client does
      while (answer.status === 429 && !Array.isArray(answer.json)) {
        await delay(Number(answer.headers.get('retry-after')) * 1000)
        answer = await call('', attacker, attackerHeaders, batch)
      }
      assert.equal(answer.status, 200, answer.text.slice(0, 300))
      const calls = answer.json as unknown as { error?: { message: string; event?: number } }[]
      const worked = calls.filter((each) => each.error?.message.endsWith('still working on the call')).length
      const refused = calls.filter((each) => each.error?.event === -33500).length
      assert.equal(worked + refused, 40, answer.text.slice(0, 300))
      assert.equal(
        Number(answer.headers.get('x-credits-charged')),
        worked * price('eth_call') + (worked > 0 ? envelopeCredits : 0),
      )
      charged += worked
    }
    report.push(
      `  endless eth_call (${hood.endlessGas} gas): ${endless.sent} reached the node (at most ${endless.maxInFlight} at once), ${charged} charged`,
    )
    assert.equal(endless.sent, charged, 'each call that reached the node reached it once, and was charged')
    assert.ok(
      endless.maxInFlight <= attackerCallsInFlight,
      `${endless.maxInFlight} of the key's calls sent at once`,
    )
  }

  /**
   * `count` batches of 40 calls answering 8 MiB each (the wide block with its transactions), one
   * after another from a process of their own: each answer's status and length.
   */
  function bigBatches(count: number): Promise<{ status: number; bytes: number }[]> {
    const body = JSON.stringify(
      Array.from({ length: 40 }, (_, index) =>
        rpcBody('eth_getBlockByNumber', [hood.wideBlock, true], 10 + index),
      ),
    )
    return sendBigBatches(`${gateway.url}/wide/v3/${attacker}`, body, count, attackerHeaders)
  }

  /**
   * A stranger's cheap probes, from `strangerAddress`: the key that requires its secret and the
   * one that requires a JWT answer exactly as a key that does not exist, and none costs their owners
   * anything; then the attacker names the neighbour's filter: refused as unknown, for nothing, and
   * the filter stays the neighbour's.
   */
  async function strangersAndFilters(strangerAddress: string, rounds: number): Promise<void> {
    const { secretKey, jwtKey, neighbourFilter } = hood
    const unknownKey = 'f'.repeat(32)
    const bearer = { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln' }
    /** Status, body and every header but the date: what a stranger can compare. */
    const seen = async (key: string, headers: Record<string, string> = {}) => {
      const answer = await call(
        '',
        key,
        { 'x-forwarded-for': strangerAddress, ...headers },
        rpcBody('eth_chainId'),
      )
      const kept = [...answer.headers].filter(([name]) => name !== 'date')
      return { status: answer.status, text: answer.text, headers: kept }
    }
    const unknown = await seen(unknownKey)
    assert.equal(unknown.status, 401)
    assert.deepEqual(await seen(secretKey), unknown)
    assert.deepEqual(await seen(jwtKey), unknown)
    assert.deepEqual(await seen(jwtKey, bearer), await seen(unknownKey, bearer))
    const ownersBefore = [await hood.usageOf(secretKey), await hood.usageOf(jwtKey)]
    for (let round = 0; round < rounds; round++) {
      for (const [key, headers] of [
        [unknownKey, {}],
        [secretKey, {}],
        [jwtKey, bearer],
      ] as const) {
        const probe = await seen(key, headers)
        // refused, and past the failure limiter's burst refused unchecked: never a balance shown
        assert.ok(probe.status === 401 || probe.status === 429, `${probe.status}`)
        assert.ok(
          !probe.headers.some(([name]) => name.startsWith('x-credits')),
          JSON.stringify(probe.headers),
        )
      }
    }
    assert.deepEqual(
      [await hood.usageOf(secretKey), await hood.usageOf(jwtKey)],
      ownersBefore,
      'the owners charged nothing',
    )

    const notFound = { code: -32000, message: 'filter not found' }
    for (let round = 0; round < rounds; round++) {
      const changes = await call(
        '',
        attacker,
        attackerHeaders,
        rpcBody('eth_getFilterChanges', [neighbourFilter]),
      )
      assert.deepEqual(changes.json.error, notFound)
      assert.equal(changes.headers.get('x-credits-charged'), '0')
      const removal = await call(
        '',
        attacker,
        attackerHeaders,
        rpcBody('eth_uninstallFilter', [neighbourFilter]),
      )
      assert.equal(removal.json.result, false)
      assert.equal(removal.headers.get('x-credits-charged'), '0')
    }
    const own = await call(
      '',
      hood.neighbour,
      neighbourHeaders,
      rpcBody('eth_getFilterChanges', [neighbourFilter]),
    )
    assert.ok(Array.isArray(own.json.result), own.text.slice(0, 200))
  }

  /** The `devnet` upstream, which the endless calls and the neighbour share: in use, never a failure. */
  async function nodeNeverJudgedFailing(): Promise<void> {
    const metrics = await readMetrics(gateway.url)
    assert.equal(metrics.value('tollgate_upstream_up', { network: 'devnet' }), 1)
    assert.equal(metrics.value('tollgate_upstream_failures_total', { network: 'devnet' }), 0)
  }

  return {
    stalledUploads,
    neighbourBatches,
    wideLogs,
    watchEndless,
    endlessCalls,
    bigBatches,
    strangersAndFilters,
    nodeNeverJudgedFailing,
  }
}
