import { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { splitAnswer } from '../cache/keptResults.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { MalformedUpstreamAnswerError, UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { type NodeError, readNodeError } from '../jsonrpc/readNodeError.ts'
import type { RpcId } from '../jsonrpc/types.ts'
import { withId } from '../jsonrpc/withId.ts'
import type { Network } from '../networks/createNetwork.ts'
import { findNodeErrorRule } from '../upstreams/nodeErrors.ts'
import { type RangeLimit, readRangeLimit } from '../upstreams/readRangeLimit.ts'
import type { SendOptions } from '../upstreams/SendOptions.ts'
import type { ChunkCharge } from './CallCharge.ts'
import { chunkRoute } from './chunkRoute.ts'
import { LogsWidths } from './LogsWidths.ts'
import { countLogs, logsPartsOf, mergeLogs } from './mergeLogs.ts'

/** An eth_getLogs query by block range: its filter as sent on, and its first and last block, known exactly. */
export type LogsQuery = { filter: Record<string, unknown>; first: bigint; last: bigint }

/** Chunks asked at once. */
const parallelChunks = 4
/**
 * The most upstream calls one query is split into, refusals of chunks included: past it, the
 * refusal is the answer. Each is paid for (the method's price, held against the key before it is
 * sent: CallCharge), so this bounds what one call may cost and how long it takes: 64 holds the
 * gateway's default range (10,000 blocks) at the stated limits of most providers (500 to 2,048
 * blocks and up) and five rounds of halving (a range in 32 chunks, 62 calls).
 * @internal exported for its tests
 */
export const maxChunkCalls = 64

const clock = () => performance.now()

/**
 * Whether a query is at least as wide as a range the network's upstreams all refused lately, or
 * wider than they stated (LogsWidths): it is split at once, without a first refused call.
 */
export function splitsAtOnce(network: Network, query: LogsQuery, now: () => number = clock): boolean {
  const { refused } = LogsWidths.of(network).knownFor(query.filter, now())
  return refused !== undefined && widthOf(query.first, query.last) >= refused
}

/** The node's error when `answer` is an eth_getLogs range refusal tollgate may split (nodeErrors.ts `splitsRange`). */
export function rangeRefusalOf(answer: Buffer): NodeError | undefined {
  const error = readNodeError(answer)
  return error && findNodeErrorRule(error)?.splitsRange ? error : undefined
}

/**
 * The chunks of `first`..`last` a refusal stating `limit` asks for: ranges of the suggested or the
 * stated width (the narrower), else two halves; none when it cannot be split (one block).
 * @internal exported for its tests
 */
export function planChunks(first: bigint, last: bigint, limit: RangeLimit): [bigint, bigint][] {
  const width = last - first + 1n
  if (width < 2n) return []
  const { suggestedBlocks, limitBlocks } = limit
  let size = suggestedBlocks ?? limitBlocks
  if (limitBlocks !== undefined && size !== undefined && limitBlocks < size) size = limitBlocks
  if (size === undefined || size >= width) {
    const middle = first + width / 2n - 1n
    return [
      [first, middle],
      [middle + 1n, last],
    ]
  }
  const chunks: [bigint, bigint][] = []
  for (let start = first; start <= last; start += size) {
    const end = start + size - 1n
    chunks.push([start, end < last ? end : last])
  }
  return chunks
}

/**
 * eth_getLogs over a range every upstream refused (`refusal`, the last node's answer), or one wider
 * than they were seen to answer lately (`refusal` undefined: splitsAtOnce): the range is split as the
 * refusals say (planChunks), the chunks asked with bounded parallelism (a chunk refused in turn is
 * split again), and their logs merged in block order into one answer for `id`. Chunks at or below
 * the finalized block go through the cache as immutable answers.
 *
 * Each node call is charged to the key (`charge`): the refusal, and each chunk, unless it fails
 * without a node's answer or work (a timeout the node worked through is charged). The first chunk of a split at once is held with the call; every other is
 * held against the key before it is sent (waiting for its per-second rate while a chunk could still
 * be answered before the call's deadline), and a chunk the key cannot pay for ends the split with
 * the 402 or 429 that refuses it.
 *
 * Answers the refusal itself when it cannot be split (one block, more than maxChunkCalls calls, or
 * more than the key's per-second rate pays for before the call's deadline; for a split at once that
 * ends so, the chunk's refusal), and a chunk's own error (missing data, say) when one
 * answers one, as the node wrote it; throws MalformedUpstreamAnswerError when a chunk's answer
 * cannot be read. What the refusals say the network answers is learned when every upstream said it
 * (`options.answeredBy` counts who refused): a stated limit, or where they stated none the range
 * refused; and the widest chunk answered below a range refused (LogsWidths), where the next split
 * begins.
 * Once the first chunks hold more logs than the network's `maxLogsResults`, no more are asked: the
 * answer is their logs, which the result limit's check then refuses naming the range that fits.
 * Rejects as the pool does (timeout, no upstream, the client gone, the answer budget).
 */
export async function splitLogsRange(
  network: Network,
  query: LogsQuery,
  refusal: Buffer | undefined,
  id: RpcId,
  options: SendOptions,
  charge: ChunkCharge,
  now: () => number = clock,
): Promise<Buffer> {
  const error = refusal ? readNodeError(refusal) : undefined
  const stated = error ? readRangeLimit(messageOf(error)) : {}
  if (error && refusedByEvery(network, options.answeredBy))
    LogsWidths.of(network).learnRefusal(query.filter, widthOf(query.first, query.last), stated, now())
  const limit = LogsWidths.of(network).withKnownWidth(query.filter, stated, now())
  const plan = planChunks(query.first, query.last, limit)
  // each chunk to hold (a split at once sends its first as the call's own)
  const holds = refusal ? plan.length : plan.length - 1
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY
  if (plan.length === 0 || plan.length > maxChunkCalls || !charge.paysInTime(holds, deadline))
    return refusal ?? (await wholeRange(network, query, id, options))
  // the refusal a node answered is the split's first node call
  if (refusal) charge.chargeCall()
  const split = new Split(network, query.filter, options, charge, refusal === undefined, now)
  // the chunks answered so far, and how far from the first they run without a gap: once that much
  // holds more logs than the network's result limit, the answer is refused whatever comes after
  const answered: (Buffer[] | undefined)[] = []
  let prefix = 0
  let prefixLogs = 0
  const fetchChunk = async ([from, to]: [bigint, bigint], index: number) => {
    answered[index] = await split.fetchRange(from, to)
    for (let parts = answered[prefix]; parts !== undefined; parts = answered[++prefix])
      prefixLogs += countLogs(parts)
    if (prefixLogs > network.maxLogsResults) throw split.stop({ kind: 'enough' })
  }
  try {
    await Promise.all(plan.map(fetchChunk))
    return mergeLogs(id, answered.flat() as Buffer[])
  } catch (err) {
    if (!(err instanceof Stop)) throw err
    const { ending } = err
    if (ending.kind === 'failed') throw ending.error
    // the logs up to there: the result limit's check names the range that holds no more
    if (ending.kind === 'enough') return mergeLogs(id, answered.slice(0, prefix).flat() as Buffer[])
    if (ending.kind === 'unsplit') return refusal ?? Buffer.from(withId(ending.refusal, id))
    // a chunk's own answer, as the node wrote it, for the call
    return Buffer.from(withId(ending.answer, id))
  } finally {
    split.end()
    // the widest chunk answered: where a wider range was refused, the width the next split begins with
    if (split.widestAnswered > 0n)
      LogsWidths.of(network).learnAnswered(query.filter, split.widestAnswered, now())
  }
}

/** Blocks `first` to `last`, both counted. */
function widthOf(first: bigint, last: bigint): bigint {
  return last - first + 1n
}

/** The query as one call, when a split decided on at once (a learned width) turns out not to be possible. */
function wholeRange(network: Network, query: LogsQuery, id: RpcId, options: SendOptions): Promise<Buffer> {
  return network.pool.send(bodyOf(id, query.filter), options)
}

/**
 * Whether every upstream of the network answered a call with an error (`answeredBy`): one upstream's
 * limit, while another is down, is not the network's.
 */
function refusedByEvery(network: Network, answeredBy: { members: number } | undefined): boolean {
  return answeredBy !== undefined && answeredBy.members >= network.pool.members.length
}

function messageOf(error: NodeError): string {
  return typeof error.message === 'string' ? error.message : ''
}

/** How a split ends before all its chunks are merged. */
type Ending =
  /** A chunk answered with its own error (missing data, say): the call's answer, as the node wrote it. */
  | { kind: 'answer'; answer: Buffer }
  /** A chunk's range was refused and cannot be split as far as the refusal asks (one block, maxChunkCalls). */
  | { kind: 'unsplit'; refusal: Buffer }
  /** The first chunks hold more logs than the network's result limit. */
  | { kind: 'enough' }
  /**
   * A chunk failed: no upstream, the client gone, an answer that cannot be read, the key unable to
   * pay for the next one (the 402 or 429), or the call already over.
   */
  | { kind: 'failed'; error: unknown }

class Stop extends Error {
  constructor(readonly ending: Ending) {
    super('the split ended')
  }
}

/**
 * One split's chunks in flight: at most parallelChunks at once, at most maxChunkCalls in all, each
 * paid for before it is sent (the call's own, while `ownCallFree`; else held by `charge`) and
 * charged, unless it fails without a node's answer or work (upstream or here: isFree).
 */
class Split {
  calls = 0
  running = 0
  /** The widest chunk answered with logs, in blocks (0 while none was). */
  widestAnswered = 0n
  /** How long the slowest chunk took, ms. */
  slowestMs = 0
  readonly waiting: (() => void)[] = []
  stopped: Stop | undefined
  /**
   * Set when the split ends or its client leaves: a chunk waiting for the key's rate waits no more,
   * and one at a node is cancelled (the answer it would bring has no call left to go to, nor an
   * answer budget to be counted on).
   */
  readonly ended = new Cancellation()
  readonly #unlisten: (() => void) | undefined

  constructor(
    readonly network: Network,
    readonly filter: Record<string, unknown>,
    readonly options: SendOptions,
    readonly charge: ChunkCharge,
    /** The call sent nothing before (a split at once): its first chunk is its own node call. */
    public ownCallFree: boolean,
    readonly now: () => number,
  ) {
    this.#unlisten = options.cancellation?.onCancel(() => this.ended.cancel())
  }

  /** The logs of `from`..`to` as parts of a JSON array's text, in block order. */
  async fetchRange(from: bigint, to: bigint): Promise<Buffer[]> {
    const answeredBy = { members: 0 }
    let answer: Awaited<ReturnType<Split['fetchChunk']>>
    try {
      answer = await this.runPaidInTurn(() => this.fetchChunk(from, to, answeredBy))
    } catch (err) {
      // a chunk that failed ends the split: no more are sent
      throw err instanceof Stop ? err : this.stop({ kind: 'failed', error: err })
    }
    if ('parts' in answer) {
      if (widthOf(from, to) > this.widestAnswered) this.widestAnswered = widthOf(from, to)
      return answer.parts
    }
    if (answer instanceof MalformedUpstreamAnswerError) {
      // an answer that cannot be read is a failure upstream: free, as any
      this.charge.freeCall()
      throw this.stop({ kind: 'failed', error: answer })
    }
    const error = readNodeError(answer)
    if (!error || !findNodeErrorRule(error)?.splitsRange) throw this.stop({ kind: 'answer', answer })
    const stated = readRangeLimit(messageOf(error))
    if (refusedByEvery(this.network, answeredBy))
      LogsWidths.of(this.network).learnRefusal(this.filter, widthOf(from, to), stated, this.now())
    const limit = LogsWidths.of(this.network).withKnownWidth(this.filter, stated, this.now())
    const plan = planChunks(from, to, limit)
    if (plan.length === 0 || this.calls + plan.length > maxChunkCalls)
      throw this.stop({ kind: 'unsplit', refusal: answer })
    return (await Promise.all(plan.map(([start, end]) => this.fetchRange(start, end)))).flat()
  }

  stop(ending: Ending): Stop {
    this.stopped ??= new Stop(ending)
    this.ended.cancel()
    return this.stopped
  }

  /** The call has its answer: chunks still waiting for the key's rate give up. */
  end(): void {
    this.ended.cancel()
    this.#unlisten?.()
  }

  /**
   * Runs `task` (one node call) in its turn (when fewer than parallelChunks run), held against the
   * key and charged, unless the split has ended; rejects with what refuses to pay for it. The call
   * is freed again when it fails without a node's work, or is stopped by the split's end or the
   * client's leaving (isFree).
   */
  async runPaidInTurn<T>(task: () => Promise<T>): Promise<T> {
    // a slot ends by passing to the next task waiting, if any: never more than parallelChunks run
    if (this.running >= parallelChunks) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      if (this.stopped) throw this.stopped
      const own = this.ownCallFree
      this.ownCallFree = false
      if (!own) {
        // waited for only while a chunk as slow as the slowest so far could still come back in time
        const { deadline = Number.POSITIVE_INFINITY } = this.options
        const held = await this.charge.holdNext(deadline - this.slowestMs, this.ended)
        if (!held) throw this.stop({ kind: 'failed', error: new Error('the call is over') })
        // held, but the split ended meanwhile: nothing is sent (the hold goes back when the request settles)
        if (this.stopped) throw this.stopped
      }
      this.charge.chargeCall()
      this.calls++
      const startedMs = performance.now()
      try {
        return await task()
      } catch (err) {
        if (isFree(err)) this.charge.freeCall()
        throw err
      } finally {
        this.slowestMs = Math.max(this.slowestMs, performance.now() - startedMs)
      }
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  /**
   * One chunk's logs, the answer a node gave for it without a result (an error, as it wrote it), or
   * MalformedUpstreamAnswerError for an answer that cannot be read. `answeredBy` counts the members
   * that answered an error (SendOptions).
   */
  async fetchChunk(
    from: bigint,
    to: bigint,
    answeredBy: { members: number },
  ): Promise<{ parts: Buffer[] } | Buffer | MalformedUpstreamAnswerError> {
    const filter = { ...this.filter, fromBlock: hex(from), toBlock: hex(to) }
    const { cache, head } = this.network
    const finalized = head.finalized()
    const options = { ...chunkRoute(this.options, from, to, finalized), answeredBy, cancellation: this.ended }
    let answer: Buffer
    if (cache && finalized !== undefined && to <= finalized) {
      // the same key as a client's own call for this chunk
      const key = `eth_getLogs${JSON.stringify([filter])}`
      const hit = cache.get(key, 'immutable', 1)
      if (hit !== undefined) answer = hit instanceof AnswerParts ? hit.toBuffer() : Buffer.from(hit)
      else {
        const loaded = await cache.load(key, 'immutable', () => this.sharedLoad(filter, options))
        if ('answer' in loaded) return loaded.answer
        return logsPartsOf(loaded.result)
      }
    } else answer = await this.network.pool.send(bodyOf(1, filter), options)
    let split: ReturnType<typeof splitAnswer>
    try {
      split = splitAnswer(answer)
    } catch (err) {
      return new MalformedUpstreamAnswerError({
        cause: err,
        logDetails: 'an eth_getLogs answer that is not JSON',
      })
    }
    return 'answer' in split ? split.answer : logsPartsOf(split.result)
  }

  /**
   * A chunk's cache load, which other calls may join: it does not end when this call's client
   * leaves, and holds what it takes in on a budget of its own until it ends.
   */
  sharedLoad(filter: Record<string, unknown>, options: SendOptions): Promise<Buffer> {
    const answerBudget = options.answerBudget?.forShared()
    return this.network.pool
      .send(bodyOf(1, filter), { ...options, cancellation: undefined, answerBudget })
      .finally(() => answerBudget?.release())
  }
}

/**
 * Whether a chunk's failure costs nothing: ours or upstream (5xx), as any call's, but a timeout the
 * node worked through, the chunk slow by its nature (priceOf's `failed`).
 */
function isFree(err: unknown): boolean {
  // stopped by the split's end or the client's leaving, whether or not it reached a node: as a call
  // whose client left
  if (err instanceof ClientGoneError) return true
  if (err instanceof UpstreamTimeoutError && err.nodeWorked) return false
  return err instanceof TollgateError && err.httpStatus >= 500
}

function bodyOf(id: RpcId, filter: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [filter] })
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`
}
