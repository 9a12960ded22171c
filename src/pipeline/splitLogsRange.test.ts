import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createRpcCache } from '../cache/createRpcCache.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import { MalformedUpstreamAnswerError, UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { SendOptions } from '../upstreams/SendOptions.ts'
import { learnedLimitMs } from './LogsWidths.ts'
import { maxChunkCalls, planChunks, rangeRefusalOf, splitLogsRange, splitsAtOnce } from './splitLogsRange.ts'

const hex = (value: bigint) => `0x${value.toString(16)}`

type Refuse = (from: bigint, to: bigint) => { code: number; message: string } | undefined

/**
 * A network whose pool answers eth_getLogs with one log per block (two in even blocks), refusing
 * what `refuse` says; it counts the chunks asked and the most asked at once. Its pool has `members`
 * upstreams (one), and `refusedBy` of them refuse what `refuse` says (all), as SendOptions.answeredBy tells.
 */
function fakeNetwork(
  refuse: Refuse,
  options: {
    finalized?: bigint
    cache?: boolean
    maxLogsResults?: number
    members?: number
    refusedBy?: number
    answer?: (from: bigint, to: bigint) => string | undefined
    /** Ranges whose call fails as every upstream timing out does (`nodeWorked`: while the node worked on it). */
    fails?: (from: bigint, to: bigint) => boolean
    nodeWorked?: boolean
    /** Ranges whose call the node works on until the call is cancelled (then it rejects as the pool does). */
    hangs?: (from: bigint, to: bigint) => boolean
  } = {},
) {
  const asked: [bigint, bigint][] = []
  let cancelled = 0
  let inFlight = 0
  let mostInFlight = 0
  const members = options.members ?? 1
  const pool = {
    members: Array.from({ length: members }, () => ({})),
    async send(body: string, sendOptions: SendOptions) {
      const { id, params } = JSON.parse(body) as {
        id: unknown
        params: [{ fromBlock: string; toBlock: string }]
      }
      const from = BigInt(params[0].fromBlock)
      const to = BigInt(params[0].toBlock)
      asked.push([from, to])
      if (options.hangs?.(from, to))
        return await new Promise<Buffer>((_resolve, reject) =>
          sendOptions.cancellation?.onCancel(() => {
            cancelled++
            reject(new ClientGoneError())
          }),
        )
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      // later chunks answer first: the merge must keep block order
      for (let turn = 0n; turn < 20n - (from % 20n); turn++)
        await new Promise((resolve) => setImmediate(resolve))
      inFlight--
      if (options.fails?.(from, to)) throw new UpstreamTimeoutError({}, options.nodeWorked)
      const written = options.answer?.(from, to)
      if (written !== undefined) return Buffer.from(written)
      const error = refuse(from, to)
      if (error) {
        if (sendOptions.answeredBy) sendOptions.answeredBy.members = options.refusedBy ?? members
        return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error }))
      }
      return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: logsOf(from, to) }))
    },
  }
  const network = {
    pool,
    cache: options.cache ? createRpcCache({ maxBytes: 1_000_000, maxEntryBytes: 100_000 }) : undefined,
    head: { finalized: () => options.finalized },
    maxLogsResults: options.maxLogsResults ?? 10_000,
  } as unknown as Network
  return { network, asked, mostInFlight: () => mostInFlight, cancelled: () => cancelled }
}

function logsOf(from: bigint, to: bigint) {
  const logs = []
  for (let block = from; block <= to; block++) {
    for (let index = 0n; index < (block % 2n === 0n ? 2n : 1n); index++) {
      logs.push({ blockNumber: hex(block), logIndex: hex(index), data: '0x' })
    }
  }
  return logs
}

const limitedTo =
  (limit: bigint): Refuse =>
  (from, to) =>
    to - from + 1n > limit
      ? { code: 35, message: `ranges over ${limit} blocks are not supported on freetier` }
      : undefined

const query = (first: bigint, last: bigint) => ({ filter: { address: '0x01' }, first, last })
const refusalOf = (id: number, error: { code: number; message: string }) =>
  Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error }))
const options = { deadline: Number.POSITIVE_INFINITY }
/**
 * A call's charge that pays for every chunk (or, with `refuseAfter`, for that many, then refuses as
 * the per-second rate does); it counts the chunks held and the node calls charged.
 */
function paid(refuseAfter = Number.POSITIVE_INFINITY, paysFor = Number.POSITIVE_INFINITY) {
  const charge = {
    paysInTime: (calls: number) => calls <= paysFor,
    held: 0,
    splitCalls: 0,
    async holdNext() {
      if (charge.held >= refuseAfter) throw new RateLimitError('planCreditsPerSecond', 2_000)
      charge.held++
      return true
    },
    chargeCall() {
      charge.splitCalls++
    },
    freeCall() {
      charge.splitCalls--
    },
  }
  return charge
}
/** The options of the client's call whose refusal every one of `members` upstreams answered. */
const refusedByAll = (members = 1) => ({ ...options, answeredBy: { members } })

describe('planChunks', () => {
  it('halves when the refusal states no width, or one no narrower than the range', () => {
    assert.deepEqual(planChunks(10n, 19n, {}), [
      [10n, 14n],
      [15n, 19n],
    ])
    assert.deepEqual(planChunks(10n, 20n, { limitBlocks: 50n }), [
      [10n, 14n],
      [15n, 20n],
    ])
    assert.deepEqual(planChunks(7n, 7n, {}), [], 'one block cannot be split')
  })

  it('takes the stated or suggested width, the narrower of the two, the last chunk short', () => {
    assert.deepEqual(planChunks(0n, 9n, { limitBlocks: 4n }), [
      [0n, 3n],
      [4n, 7n],
      [8n, 9n],
    ])
    assert.deepEqual(planChunks(0n, 9n, { suggestedBlocks: 5n, limitBlocks: 3n }), [
      [0n, 2n],
      [3n, 5n],
      [6n, 8n],
      [9n, 9n],
    ])
    assert.deepEqual(planChunks(0n, 9n, { suggestedBlocks: 5n }), [
      [0n, 4n],
      [5n, 9n],
    ])
  })
})

describe('splitLogsRange', () => {
  it('merges the chunks in block order into exactly the answer of the whole range, for the call id', async () => {
    const { network, asked, mostInFlight } = fakeNetwork(limitedTo(10n))
    const refusal = refusalOf(7, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const answer = await splitLogsRange(network, query(100n, 199n), refusal, 7, options, paid())
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 7, result: logsOf(100n, 199n) }))
    assert.equal(asked.length, 10, 'ten chunks of the stated 10 blocks, none refused')
    assert.ok(mostInFlight() <= 4, `at most 4 chunks at once (saw ${mostInFlight()})`)
    assert.equal(mostInFlight(), 4, 'and 4 at once while there are more')
  })

  it('halves where the refusal says no width, and splits a refused chunk again', async () => {
    const { network, asked } = fakeNetwork((from, to) =>
      to - from + 1n > 3n ? { code: -32602, message: 'Block range limit exceeded.' } : undefined,
    )
    const refusal = refusalOf(1, { code: -32602, message: 'Block range limit exceeded.' })
    const answer = await splitLogsRange(network, query(0n, 9n), refusal, 'x', options, paid())
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 'x', result: logsOf(0n, 9n) }))
    // 0-4 and 5-9 refused, then 0-1, 2-4, 5-6, 7-9
    assert.equal(asked.length, 6)
  })

  it("follows a suggested range (Infura's), chunk after chunk", async () => {
    const suggest: Refuse = (from, to) =>
      to - from + 1n > 4n
        ? {
            code: -32005,
            message: `query returned more than 10000 results. Try with this block range [${hex(from)}, ${hex(from + 3n)}].`,
          }
        : undefined
    const { network } = fakeNetwork(suggest)
    const answer = await splitLogsRange(
      network,
      query(3n, 20n),
      refusalOf(1, suggest(3n, 20n) as never),
      1,
      options,
      paid(),
    )
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 1, result: logsOf(3n, 20n) }))
  })

  it('remembers a limit every upstream stated, for ten minutes: later queries wider than it split at once', async () => {
    const { network, asked } = fakeNetwork(limitedTo(25n), { members: 2 })
    let nowMs = 1_000
    const now = () => nowMs
    assert.equal(splitsAtOnce(network, query(0n, 99n), now), false)
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 25 blocks are not supported on freetier' })
    await splitLogsRange(network, query(0n, 99n), refusal, 1, refusedByAll(2), paid(), now)
    assert.equal(splitsAtOnce(network, query(0n, 99n), now), true)
    assert.equal(splitsAtOnce(network, query(0n, 24n), now), false, 'within the limit: asked whole')
    asked.length = 0
    const answer = await splitLogsRange(network, query(200n, 259n), undefined, 2, options, paid(), now)
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 2, result: logsOf(200n, 259n) }))
    assert.deepEqual(asked, [
      [200n, 224n],
      [225n, 249n],
      [250n, 259n],
    ])
    nowMs += learnedLimitMs - 1
    assert.equal(splitsAtOnce(network, query(0n, 99n), now), true, 'still held')
    nowMs += 1
    assert.equal(splitsAtOnce(network, query(0n, 99n), now), false, 'expired: asked whole again')
  })

  it("does not remember a limit not every upstream stated (another was down, or answered), nor a chunk's", async () => {
    const { network } = fakeNetwork(limitedTo(10n), { members: 2, refusedBy: 1 })
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const answer = await splitLogsRange(network, query(0n, 99n), refusal, 1, refusedByAll(1), paid())
    assert.equal(answer.toString(), JSON.stringify({ jsonrpc: '2.0', id: 1, result: logsOf(0n, 99n) }))
    assert.equal(splitsAtOnce(network, query(0n, 99n)), false, 'one of two upstreams')

    // every upstream refused the call, but a chunk was refused by one only: its narrower limit is not kept
    const narrower = fakeNetwork(
      (from, to) => (to - from + 1n > 20n ? limitedTo(20n)(from, to) : undefined),
      {
        members: 2,
        refusedBy: 1,
      },
    )
    const wide = refusalOf(1, { code: 35, message: 'ranges over 50 blocks are not supported on freetier' })
    await splitLogsRange(narrower.network, query(0n, 99n), wide, 1, refusedByAll(2), paid())
    assert.equal(splitsAtOnce(narrower.network, query(0n, 49n)), false, 'the chunk limit of 20: not kept')
    assert.equal(
      splitsAtOnce(narrower.network, query(0n, 50n)),
      true,
      'the limit of 50 every upstream stated',
    )
  })

  it('a chunk answer that cannot be read is MalformedUpstreamAnswerError, not an answer made up', async () => {
    for (const written of ['{"jsonrpc":"2.0","id":1,"result":[', '{"jsonrpc":"2.0","id":1,"result":"0x1"}']) {
      const { network } = fakeNetwork(limitedTo(10n), {
        answer: (from) => (from === 10n ? written : undefined),
      })
      const refusal = refusalOf(1, {
        code: 35,
        message: 'ranges over 10 blocks are not supported on freetier',
      })
      await assert.rejects(
        splitLogsRange(network, query(0n, 29n), refusal, 1, options, paid()),
        MalformedUpstreamAnswerError,
        written,
      )
    }
  })

  it('answers the refusal itself when a block alone is refused, or the split would take more than the most calls', async () => {
    const alwaysRefused: Refuse = () => ({
      code: -32005,
      message: 'Requested range exceeds maximum RPC range limit',
    })
    const { network, asked } = fakeNetwork(alwaysRefused)
    const refusal = refusalOf(3, alwaysRefused(0n, 0n) as never)
    assert.equal(await splitLogsRange(network, query(0n, 3n), refusal, 3, options, paid()), refusal)
    assert.equal(asked.length, 6, '0-1, 2-3, then each block, the first refused alone ends it')

    const { network: tiny, asked: tinyAsked } = fakeNetwork(limitedTo(1n))
    const wide = refusalOf(4, { code: 35, message: 'ranges over 1 blocks are not supported on freetier' })
    assert.equal(await splitLogsRange(tiny, query(0n, BigInt(maxChunkCalls)), wide, 4, options, paid()), wide)
    assert.equal(tinyAsked.length, 0, 'not one chunk asked')
  })

  it("a chunk's own error (missing data) is the answer, addressed to the call", async () => {
    const { network } = fakeNetwork((from, to) =>
      to - from + 1n > 5n
        ? { code: 35, message: 'ranges over 5 blocks are not supported on freetier' }
        : from >= 10n
          ? { code: -32000, message: 'header not found' }
          : undefined,
    )
    const refusal = refusalOf(5, { code: 35, message: 'ranges over 5 blocks are not supported on freetier' })
    const answer = await splitLogsRange(network, query(0n, 19n), refusal, 5, options, paid())
    assert.deepEqual(JSON.parse(answer.toString()), {
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32000, message: 'header not found' },
    })
  })

  it('chunks at or below the finalized block are cached; the others are asked again', async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n), { finalized: 29n, cache: true })
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const first = await splitLogsRange(network, query(0n, 49n), refusal, 1, refusedByAll(), paid())
    assert.equal(asked.length, 5)
    asked.length = 0
    const again = await splitLogsRange(network, query(0n, 49n), undefined, 1, options, paid())
    assert.equal(again.toString(), first.toString())
    assert.deepEqual(asked, [
      [30n, 39n],
      [40n, 49n],
    ])
  })

  it('asks no more chunks once the first ones hold more logs than the result limit: their logs are the answer', async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n), { maxLogsResults: 20 })
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const answer = JSON.parse(
      (await splitLogsRange(network, query(0n, 99n), refusal, 1, options, paid())).toString(),
    ) as {
      result: { blockNumber: string }[]
    }
    // blocks 0..9 hold 15 logs, 0..19 hold 30: more than 20 once the first two chunks are in
    const last = BigInt((answer.result.at(-1) as { blockNumber: string }).blockNumber)
    assert.ok(last >= 19n, `the logs of the first chunks (to ${last})`)
    assert.deepEqual(answer.result, logsOf(0n, last), 'from the first block, in order, without a gap')
    assert.ok(asked.length < 10, `${asked.length} of 10 chunks asked`)
  })

  it("each chunk is paid for before it is sent: after a refusal every one; split at once, all but the first, the call's own", async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n))
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid()
    await splitLogsRange(network, query(0n, 99n), refusal, 1, refusedByAll(), charge)
    assert.equal(asked.length, 10)
    assert.deepEqual([charge.held, charge.splitCalls], [10, 11], 'ten held, charged with the refusal')

    asked.length = 0
    const atOnce = paid()
    await splitLogsRange(network, query(200n, 259n), undefined, 2, options, atOnce)
    assert.equal(asked.length, 6)
    assert.deepEqual([atOnce.held, atOnce.splitCalls], [5, 6])
  })

  it('a chunk the key cannot pay for ends the split with its refusal: no chunk is sent after it', async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n))
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid(3)
    await assert.rejects(splitLogsRange(network, query(0n, 99n), refusal, 1, options, charge), RateLimitError)
    assert.equal(asked.length, 3, 'the three chunks paid for')
    assert.equal(charge.splitCalls, 4, 'with the refusal')
    // the chunks still queued find the split ended, without asking the key again
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve))
    assert.equal(asked.length, 3)
    assert.equal(charge.held, 3)
  })

  it("answers the refusal without a chunk when the key's rate could not pay for the split in time", async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n))
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid(Number.POSITIVE_INFINITY, 9)
    assert.equal(await splitLogsRange(network, query(0n, 99n), refusal, 1, options, charge), refusal)
    assert.deepEqual(
      [asked.length, charge.held, charge.splitCalls],
      [0, 0, 0],
      'charged as the refusal alone',
    )
    await splitLogsRange(network, query(0n, 89n), refusal, 1, options, charge)
    assert.equal(asked.length, 9, 'nine chunks it pays for')
  })

  it("a chunk waiting for the key's rate gives up once the split has its answer", async () => {
    const { network } = fakeNetwork((from, to) =>
      to - from + 1n > 10n
        ? { code: 35, message: 'ranges over 10 blocks are not supported on freetier' }
        : from === 0n
          ? { code: -32000, message: 'header not found' }
          : undefined,
    )
    let holds = 0
    let gaveUp = 0
    const charge = {
      ...paid(),
      // the first chunk is paid for; the others wait for the rate until told to stop
      holdNext: (_deadline: number, cancellation: Cancellation | undefined) =>
        ++holds === 1
          ? Promise.resolve(true)
          : new Promise<boolean>((_resolve, reject) =>
              cancellation?.onCancel(() => {
                gaveUp++
                reject(new ClientGoneError())
              }),
            ),
    }
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const answer = await splitLogsRange(network, query(0n, 99n), refusal, 1, options, charge)
    assert.deepEqual(JSON.parse(answer.toString()).error, { code: -32000, message: 'header not found' })
    assert.equal(gaveUp, 4, 'every chunk in a slot but the one answered, and the next one that took its slot')
  })

  it('chunks still at the node when the split ends are cancelled with it, though its client stays', async () => {
    const { network, asked, cancelled } = fakeNetwork(
      (from, to) =>
        to - from + 1n > 10n
          ? { code: 35, message: 'ranges over 10 blocks are not supported on freetier' }
          : from === 0n
            ? { code: -32000, message: 'header not found' }
            : undefined,
      { hangs: (from) => from > 0n },
    )
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid()
    const client = { ...options, cancellation: new Cancellation() }
    const answer = await splitLogsRange(network, query(0n, 99n), refusal, 1, client, charge)
    assert.deepEqual(JSON.parse(answer.toString()).error, { code: -32000, message: 'header not found' })
    assert.equal(asked.length, 4, 'the four chunks of the first slots')
    assert.equal(cancelled(), 3, 'the three at the node when the first answered')
    assert.equal(client.cancellation.cancelled, false)
    assert.equal(
      charge.splitCalls,
      2,
      "the refusal and the chunk answered: those the split's end stopped are free",
    )
  })

  it('a chunk that fails without a node answer (upstream) is not charged: the split fails with it', async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n), { fails: (from) => from === 20n })
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid()
    await assert.rejects(
      splitLogsRange(network, query(0n, 99n), refusal, 1, options, charge),
      UpstreamTimeoutError,
    )
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve))
    assert.equal(
      charge.splitCalls,
      1 + asked.length - 1,
      'the refusal and every chunk asked but the failed one',
    )
    assert.ok(asked.length < 10, `no chunk sent after the failure (${asked.length})`)
  })

  it('a chunk that timed out while the node worked on it is charged, as such a call alone is', async () => {
    const { network, asked } = fakeNetwork(limitedTo(10n), {
      fails: (from) => from === 20n,
      nodeWorked: true,
    })
    const refusal = refusalOf(1, { code: 35, message: 'ranges over 10 blocks are not supported on freetier' })
    const charge = paid()
    await assert.rejects(
      splitLogsRange(network, query(0n, 99n), refusal, 1, options, charge),
      (err) => err instanceof UpstreamTimeoutError && err.nodeWorked,
    )
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve))
    assert.equal(
      charge.splitCalls,
      1 + asked.length,
      'the refusal and every chunk asked, the timed out one too',
    )
  })

  it('where the refusals state no width, the narrowest range refused and the widest chunk answered are learned: for the network (a range refusal), for the filter (an answer-size refusal)', async () => {
    let nowMs = 1_000
    const now = () => nowMs
    const besu = { code: -32005, message: 'Requested range exceeds maximum RPC range limit' }
    const range = fakeNetwork((from, to) => (to - from + 1n > 3n ? besu : undefined), { members: 2 })
    await splitLogsRange(range.network, query(0n, 9n), refusalOf(1, besu), 1, refusedByAll(2), paid(), now)
    // 0-4 and 5-9 refused, then 0-1, 2-4, 5-6, 7-9: five blocks refused, three answered
    const other = { filter: { address: '0x02' }, first: 0n, last: 4n }
    assert.equal(splitsAtOnce(range.network, other, now), true, 'any filter as wide as 5 blocks')
    assert.equal(splitsAtOnce(range.network, query(0n, 3n), now), false, '4 blocks were never refused')
    range.asked.length = 0
    await splitLogsRange(range.network, query(100n, 108n), undefined, 2, options, paid(), now)
    assert.deepEqual(range.asked, [
      [100n, 102n],
      [103n, 105n],
      [106n, 108n],
    ])
    nowMs += learnedLimitMs
    assert.equal(splitsAtOnce(range.network, other, now), false, 'expired: asked whole again')

    const tooLarge = { code: -32003, message: 'response too large' }
    const size = fakeNetwork((from, to) => (to - from + 1n > 3n ? tooLarge : undefined))
    await splitLogsRange(size.network, query(0n, 9n), refusalOf(1, tooLarge), 1, refusedByAll(), paid(), now)
    assert.equal(splitsAtOnce(size.network, query(50n, 54n), now), true, 'the same filter')
    assert.equal(splitsAtOnce(size.network, other, now), false, 'another filter holds other logs')

    const halfDown = fakeNetwork((from, to) => (to - from + 1n > 3n ? besu : undefined), {
      members: 2,
      refusedBy: 1,
    })
    await splitLogsRange(halfDown.network, query(0n, 9n), refusalOf(1, besu), 1, refusedByAll(1), paid(), now)
    assert.equal(splitsAtOnce(halfDown.network, query(0n, 9n), now), false, 'one of two upstreams refused')
  })

  it("one key's query refused narrows nothing for another's the node answers whole; a split at once begins at the widest chunk answered", async () => {
    const nowMs = 1_000
    const now = () => nowMs
    // besu answers up to 100 blocks, stating no width
    const besu = { code: -32005, message: 'Requested range exceeds maximum RPC range limit' }
    const { network, asked } = fakeNetwork((from, to) => (to - from + 1n > 100n ? besu : undefined))
    await splitLogsRange(network, query(0n, 100n), refusalOf(1, besu), 1, refusedByAll(), paid(), now)
    assert.deepEqual(asked, [
      [0n, 49n],
      [50n, 100n],
    ])
    const otherKey = { filter: { address: '0x02' }, first: 1_000n, last: 1_099n }
    assert.equal(splitsAtOnce(network, otherKey, now), false, '100 blocks: asked whole, for 255')
    assert.equal(splitsAtOnce(network, { ...otherKey, last: 1_100n }, now), true, '101 blocks were refused')
    asked.length = 0
    const charge = paid()
    await splitLogsRange(network, { ...otherKey, last: 1_150n }, undefined, 2, options, charge, now)
    assert.deepEqual(asked, [
      [1_000n, 1_050n],
      [1_051n, 1_101n],
      [1_102n, 1_150n],
    ])
    assert.equal(charge.splitCalls, 3)
  })

  it('rangeRefusalOf: only the refusals that may be split', () => {
    assert.ok(rangeRefusalOf(errorAnswer(35, 'ranges over 1000 blocks are not supported on freetier')))
    assert.equal(rangeRefusalOf(errorAnswer(-32601, 'the method eth_getLogs does not exist')), undefined)
    assert.equal(rangeRefusalOf(errorAnswer(-32000, 'header not found')), undefined)
    assert.equal(rangeRefusalOf(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}')), undefined)
  })
})

function errorAnswer(code: number, message: string): Buffer {
  return refusalOf(1, { code, message })
}
