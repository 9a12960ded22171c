import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { mib, readFigures } from './helpers/hostileClients.ts'
import { createAttacks, envelopeCredits, price } from './helpers/neighbourAttacks.ts'
import { rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import {
  attackerCallsInFlight,
  attackerHeaders,
  attackerRate,
  type Neighbourhood,
  neighbourHeaders,
  startNeighbourhood,
} from './helpers/startNeighbourhood.ts'
import {
  type SteadyClient,
  type SteadySample,
  startSteadyClient,
  toSteadyFigures,
} from './helpers/steadyClient.ts'
import { until } from './helpers/until.ts'

/**
 * The bound on the neighbour's 99th percentile latency in every phase: generous for a 2-core machine
 * loaded by the attacks themselves (the gateway, anvil, the attacking clients) and by other work
 * (issue #41 asked 500 ms of eth_chainId beside big batches alone; docs/operations.md has the figures).
 */
const p99BoundMs = 1_000

/**
 * A noisy neighbour (issue #41): one gateway process in front of one anvil, shared by a key that
 * runs each attack of the issue (on the developer plan, its calls in flight bounded for a 2-core
 * node) and a neighbour key (team) whose steady cheap calls must all be served, with their 99th
 * percentile latency under p99BoundMs, in every phase: each attack alone, with the attacker's
 * charges checked against docs/plans.md, then all of them at once.
 */
describe('a noisy neighbour: one key runs every attack while another key is served', () => {
  let hood: Neighbourhood
  let attacks: ReturnType<typeof createAttacks>
  let steady: SteadyClient | undefined
  /** The length of the answer to a batch of 40 calls of the wide block (its phase measures it). */
  let batchBytes = 0
  /** Each phase's neighbour figures and the attacker's charges, printed at the end (docs/operations.md). */
  const report: string[] = []

  before(async () => {
    hood = await startNeighbourhood()
    attacks = createAttacks(hood, report)
    // the neighbour's application has been running before the attacks begin: the gateway's paths
    // for its calls are warm (a first call's own cost is not the neighbours')
    const warming = startSteadyClient(
      `${hood.gateway.url}/v3/${hood.neighbour}`,
      hood.contract,
      neighbourHeaders,
    )
    await until(() => warming.count() >= 100, 'the neighbour at work')
    await warming.stop()
  })
  after(async () => {
    await steady?.stop()
    if (report.length > 0) console.log(`noisy neighbour figures:\n${report.join('\n')}`)
    await hood?.close()
  })

  /**
   * Runs `attack` while the neighbour keeps calling: every neighbour call served, its p99 under the
   * bound; the figures and what the attacker was charged (returned) go to the report. The attack
   * begins on a full bucket of the attacker's rate, whatever the phase before left of it: once its
   * debt is paid off, a second's refill fills it (it holds one second's worth); and on a node done
   * with what the phase before left it (endless calls the gateway gave up on run there to their end).
   */
  async function withNeighbour(phase: string, attack: () => Promise<void>, t: TestContext) {
    const { attacker, call } = hood
    await until(
      async () => (await call('', attacker, attackerHeaders, rpcBody('eth_chainId'))).status === 200,
      "the attacker's rate paid off",
    )
    await Promise.all([
      delay(1_000),
      // endless calls' CPU (each twice a deadline) on what a busy machine leaves anvil
      until(() => hood.proxy.atNode() === 0, 'the node done with the phase before', 60_000),
    ])
    const before = await hood.usageOf(attacker)
    steady = startSteadyClient(`${hood.gateway.url}/v3/${hood.neighbour}`, hood.contract, neighbourHeaders)
    const startedMs = performance.now()
    let samples: SteadySample[] = []
    try {
      await attack()
    } finally {
      samples = await steady.stop()
      steady = undefined
    }
    const figures = toSteadyFigures(samples)
    const line =
      `${phase}: ${Math.round((performance.now() - startedMs) / 100) / 10} s; neighbour ${figures.calls} calls, ` +
      `p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms (at ${figures.worstAtMs} ms)`
    report.push(line)
    t.diagnostic(line)
    assert.deepEqual(figures.faults, [], 'every neighbour call served')
    assert.ok(figures.calls >= 20, `the neighbour kept calling (${figures.calls} calls)`)
    assert.ok(figures.p99Ms < p99BoundMs, `the neighbour's p99 was ${figures.p99Ms} ms`)
    const elapsedMs = performance.now() - startedMs
    const charged = await hood.chargedSince(attacker, before)
    report.push(`  attacker charged ${charged.total} credits: ${JSON.stringify(charged.byMethod)}`)
    return { ...charged, elapsedMs }
  }

  /** Answers the cache of `network` keeps now (/metrics). */
  async function cachedAnswers(network: string): Promise<number> {
    return (await readMetrics(hood.gateway.url)).value('tollgate_cache_entries', { network }) ?? 0
  }

  it("eight stalled 5 MiB uploads: one held in the key's share, the neighbour served, its 300 KB batches too", async (t) => {
    const charged = await withNeighbour(
      'stalled uploads',
      () => attacks.stalledUploads(attacks.neighbourBatches),
      t,
    )
    // seven refused for nothing, the one dropped for stalling at 5 credits
    assert.deepEqual(charged.byMethod, { '(rejected)': 5 })
  })

  it('batches of 40 calls answering 8 MiB each: answered whole, each call charged', async (t) => {
    // ids of one length, so that every answer in a batch is as long as the single call's, which the
    // cache keeps: each batch is the gateway's own work (asked again if anvil, busy, missed the deadline)
    const blockCall = rpcBody('eth_getBlockByNumber', [hood.wideBlock, true], 10)
    let singleText = ''
    await until(async () => {
      const single = await hood.call('/wide', hood.attacker, attackerHeaders, blockCall)
      singleText = single.text
      return single.json.result !== undefined
    }, "the wide block's answer")
    batchBytes = 40 * Buffer.byteLength(singleText) + 39 + 2
    assert.ok(batchBytes > 320 * mib, `a batch's answers are ${batchBytes} bytes`)
    await until(async () => (await cachedAnswers('wide')) > 0, "the block's answer kept")
    let answers: { status: number; bytes: number }[] = []
    const charged = await withNeighbour(
      'batches of 40 × 8 MiB answers',
      async () => {
        answers = await attacks.bigBatches(3)
      },
      t,
    )
    assert.deepEqual(answers, Array(3).fill({ status: 200, bytes: batchBytes }))
    assert.deepEqual(charged.byMethod, {
      eth_getBlockByNumber: 3 * 40 * price('eth_getBlockByNumber'),
      '(batch)': 3 * envelopeCredits,
    })
  })

  it('wide eth_getLogs ranges against an upstream that answers 100 blocks: held to the rate, each node call charged', async (t) => {
    const charged = await withNeighbour('wide eth_getLogs', () => attacks.wideLogs(3, 5_000, true), t)
    assert.deepEqual(Object.keys(charged.byMethod), ['eth_getLogs'])
  })

  it('batches of endless eth_calls: each call at the node once, charged; the node never judged failing', async (t) => {
    const charged = await withNeighbour('endless eth_calls', () => attacks.endlessCalls(2), t)
    assert.deepEqual(charged.byMethod, {
      eth_call: 2 * attackerCallsInFlight * price('eth_call'),
      '(batch)': 2 * envelopeCredits,
    })
    await attacks.nodeNeverJudgedFailing()
  })

  it('strangers probing keys that require a secret or a JWT, and foreign filter ids: answered as unknown, for nothing', async (t) => {
    const charged = await withNeighbour(
      'strangers and foreign filter ids',
      () => attacks.strangersAndFilters('203.0.113.8', 150),
      t,
    )
    assert.equal(charged.total, 0)
  })

  it('every attack at once: the neighbour served; the attacker charged no more than its rate pays', async (t) => {
    let bigAnswers: { status: number; bytes: number }[] = []
    const charged = await withNeighbour(
      'every attack at once',
      async () => {
        // the big batch first, then the endless calls (each admitted on what the rate holds), then
        // the eth_getLogs clients, which spend all the rest of it
        const running = [
          attacks.stalledUploads(),
          attacks.bigBatches(1).then((answers) => {
            bigAnswers = answers
          }),
        ]
        await until(
          async () => bigAnswers.length > 0 || (await readFigures(hood.gateway)).answersInFlightBytes > 0,
          'the big batch at work',
        )
        const endless = attacks.watchEndless()
        running.push(attacks.endlessCalls(1, endless))
        await until(() => endless.sent > 0, 'the endless calls at the node')
        running.push(attacks.wideLogs(3, 6_000, false), attacks.strangersAndFilters('203.0.113.9', 150))
        await Promise.all(running)
      },
      t,
    )
    assert.deepEqual(bigAnswers, [{ status: 200, bytes: batchBytes }])
    assert.equal(charged.byMethod.eth_getBlockByNumber, 40 * price('eth_getBlockByNumber'))
    assert.equal(charged.byMethod.eth_call, attackerCallsInFlight * price('eth_call'))
    // a full bucket and its refill: every charge went through the one rate (the held credits of
    // calls that ended free went back to it, and were spent again)
    const paidFor = attackerRate * (1 + charged.elapsedMs / 1000)
    assert.ok(charged.total <= paidFor, `${charged.total} credits charged, ${Math.round(paidFor)} paid for`)
    await attacks.nodeNeverJudgedFailing()
  })
})
