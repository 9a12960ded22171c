import { splitAnswer } from '../cache/createRpcCache.ts'
import { MalformedUpstreamAnswerError } from '../errors/upstreamErrors.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import type { RpcId } from '../jsonrpc/types.ts'
import { withId } from '../jsonrpc/withId.ts'
import type { Network } from '../networks/createNetwork.ts'
import { findNodeErrorRule, type NodeError, readNodeError } from '../upstreams/nodeErrors.ts'
import { type RangeLimit, readRangeLimit } from '../upstreams/readRangeLimit.ts'
import type { SendOptions } from '../upstreams/SendOptions.ts'

/** An eth_getLogs query by block range: its filter as sent on, and its first and last block, known exactly. */
export type LogsQuery = { filter: Record<string, unknown>; first: bigint; last: bigint }

/** Chunks asked at once. */
const parallelChunks = 4
/**
 * The most upstream calls one query is split into, refusals of chunks included: past it, the
 * refusal is the answer. A client's call is charged once, so this is how many upstream calls one
 * call may cost: 64 holds the gateway's default range (10,000 blocks) at the stated limits of most
 * providers (500 to 2,048 blocks and up) and five rounds of halving (a range in 32 chunks, 62 calls).
 * @internal exported for its tests
 */
export const maxChunkCalls = 64
/**
 * How long a learned limit holds: then a query wider than it is asked whole again, and learns it anew.
 * @internal exported for its tests
 */
export const learnedLimitMs = 10 * 60_000

/**
 * Per network, the narrowest range limit every upstream stated (a stated limit, never a
 * suggestion), and until when it holds (`untilMs`, on the clock of splitsAtOnce and splitLogsRange).
 */
const learnedLimits = new WeakMap<Network, { blocks: bigint; untilMs: number }>()

const clock = () => performance.now()

/**
 * Whether a query is wider than what every one of the network's upstreams said lately it answers:
 * it is split at once, without a first refused call.
 */
export function splitsAtOnce(network: Network, query: LogsQuery, now: () => number = clock): boolean {
  const learned = learnedBlocksOf(network, now())
  return learned !== undefined && query.last - query.first + 1n > learned
}

/** The network's learned limit while it holds. */
function learnedBlocksOf(network: Network, nowMs: number): bigint | undefined {
  const learned = learnedLimits.get(network)
  return learned && nowMs < learned.untilMs ? learned.blocks : undefined
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
 * than they have said they answer (`refusal` undefined: splitsAtOnce): the range is split as the
 * refusals say (planChunks), the chunks asked with bounded parallelism (a chunk refused in turn is
 * split again), and their logs merged in block order into one answer for `id`. Chunks at or below
 * the finalized block go through the cache as immutable answers. Answers the refusal itself when it
 * cannot be split (one block, or more than maxChunkCalls calls), and a chunk's own error (missing
 * data, say) when one answers one, as the node wrote it; throws MalformedUpstreamAnswerError when a
 * chunk's answer cannot be read. A limit stated by every upstream of the network (`options.answeredBy`
 * counts who refused) is remembered for learnedLimitMs (splitsAtOnce).
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
  now: () => number = clock,
): Promise<Buffer> {
  const error = refusal ? readNodeError(refusal) : undefined
  let limit: RangeLimit = {}
  if (error) {
    limit = readRangeLimit(typeof error.message === 'string' ? error.message : '')
    learn(network, limit, options.answeredBy, now)
  } else if (!refusal) {
    const learned = learnedBlocksOf(network, now())
    if (learned !== undefined) limit = { limitBlocks: learned }
  }
  const plan = planChunks(query.first, query.last, limit)
  if (plan.length === 0 || plan.length > maxChunkCalls)
    return refusal ?? (await wholeRange(network, query, id, options))
  const split = new Split(network, query.filter, options, now)
  // the chunks answered so far, and how far from the first they run without a gap: once that much
  // holds more logs than the network's result limit, the answer is refused whatever comes after
  const answered: (Buffer[] | undefined)[] = []
  let prefix = 0
  let prefixLogs = 0
  const fetchChunk = async ([from, to]: [bigint, bigint], index: number) => {
    answered[index] = await split.fetchRange(from, to)
    for (let parts = answered[prefix]; parts !== undefined; parts = answered[++prefix])
      prefixLogs += countLogs(parts)
    if (prefixLogs > network.maxLogsResults) throw split.stop(undefined, true)
  }
  try {
    await Promise.all(plan.map(fetchChunk))
    return mergedAnswer(id, answered.flat() as Buffer[])
  } catch (err) {
    if (!(err instanceof Stop)) throw err
    // the logs up to there: the result limit's check names the range that holds no more
    if (err.enough) return mergedAnswer(id, answered.slice(0, prefix).flat() as Buffer[])
    if (err.answer === undefined) return refusal ?? (await wholeRange(network, query, id, options))
    if (err.answer instanceof MalformedUpstreamAnswerError) throw err.answer
    // a chunk's own answer, as the node wrote it, for the call
    return Buffer.from(withId(err.answer, id))
  }
}

/** The query as one call, when a split decided on at once (a learned limit) turns out not to be possible. */
function wholeRange(network: Network, query: LogsQuery, id: RpcId, options: SendOptions): Promise<Buffer> {
  return network.pool.send(bodyOf(id, query.filter), options)
}

/**
 * Keeps a stated limit for learnedLimitMs, when every upstream of the network refused (`answeredBy`:
 * one upstream's limit, while another is down, is not the network's) and it is the narrowest that
 * holds: a narrower one stated since replaces it, a wider one waits until it expires.
 */
function learn(
  network: Network,
  { limitBlocks }: RangeLimit,
  answeredBy: { members: number } | undefined,
  now: () => number,
): void {
  if (limitBlocks === undefined || answeredBy === undefined) return
  if (answeredBy.members < network.pool.members.length) return
  const nowMs = now()
  const learned = learnedBlocksOf(network, nowMs)
  if (learned === undefined || limitBlocks < learned) {
    learnedLimits.set(network, { blocks: limitBlocks, untilMs: nowMs + learnedLimitMs })
  }
}

/**
 * Ends a split: with a chunk's answer for the client (`answer`: a node's error, or the answer that
 * could not be read), without one when the range cannot be split as far as the refusals ask (the
 * first refusal is the answer then), or (`enough`) once the first chunks hold more logs than the
 * network's result limit.
 */
class Stop extends Error {
  constructor(
    readonly answer: Buffer | MalformedUpstreamAnswerError | undefined,
    readonly enough = false,
  ) {
    super('the split ended')
  }
}

/** One split's chunks in flight: at most parallelChunks at once, at most maxChunkCalls in all. */
class Split {
  calls = 0
  running = 0
  readonly waiting: (() => void)[] = []
  stopped: Stop | undefined

  constructor(
    readonly network: Network,
    readonly filter: Record<string, unknown>,
    readonly options: SendOptions,
    readonly now: () => number,
  ) {}

  /** The logs of `from`..`to` as parts of a JSON array's text, in block order. */
  async fetchRange(from: bigint, to: bigint): Promise<Buffer[]> {
    const answeredBy = { members: 0 }
    const answer = await this.limited(() => this.fetchChunk(from, to, answeredBy))
    if ('parts' in answer) return answer.parts
    if (answer instanceof MalformedUpstreamAnswerError) throw this.stop(answer)
    const error = readNodeError(answer)
    if (!error || !findNodeErrorRule(error)?.splitsRange) throw this.stop(answer)
    const limit = readRangeLimit(typeof error.message === 'string' ? error.message : '')
    learn(this.network, limit, answeredBy, this.now)
    const plan = planChunks(from, to, limit)
    if (plan.length === 0 || this.calls + plan.length > maxChunkCalls) throw this.stop(undefined)
    return (await Promise.all(plan.map(([start, end]) => this.fetchRange(start, end)))).flat()
  }

  stop(answer: Buffer | MalformedUpstreamAnswerError | undefined, enough = false): Stop {
    this.stopped ??= new Stop(answer, enough)
    return this.stopped
  }

  /** Runs `task` when fewer than parallelChunks run, unless the split has ended. */
  async limited<T>(task: () => Promise<T>): Promise<T> {
    // a slot ends by passing to the next task waiting, if any: never more than parallelChunks run
    if (this.running >= parallelChunks) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      if (this.stopped) throw this.stopped
      this.calls++
      return await task()
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
    const options = { ...this.options, answeredBy }
    const finalized = head.finalized()
    let answer: Buffer
    if (cache && finalized !== undefined && to <= finalized) {
      // the same key as a client's own call for this chunk
      const key = `eth_getLogs${JSON.stringify([filter])}`
      const hit = cache.get(key, 'immutable', 1)
      if (hit !== undefined) answer = hit instanceof AnswerParts ? hit.toBuffer() : Buffer.from(hit)
      else {
        const loaded = await cache.load(key, 'immutable', () =>
          this.network.pool.send(bodyOf(1, filter), options),
        )
        if ('answer' in loaded) return loaded.answer
        return partsOf(loaded.result)
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
    return 'answer' in split ? split.answer : partsOf(split.result)
  }
}

/** The logs of a result (`[…]`) as the text between its brackets: none for `[]`, an error for anything else. */
function partsOf(result: string | Buffer): { parts: Buffer[] } | MalformedUpstreamAnswerError {
  const text = typeof result === 'string' ? Buffer.from(result) : result
  let start = 0
  let end = text.length
  while (start < end && isBlank(text[start] as number)) start++
  while (end > start && isBlank(text[end - 1] as number)) end--
  if (text[start] !== 0x5b || text[end - 1] !== 0x5d) {
    return new MalformedUpstreamAnswerError({ logDetails: 'an eth_getLogs result that is not a list' })
  }
  start++
  end--
  while (start < end && isBlank(text[start] as number)) start++
  return { parts: start < end ? [text.subarray(start, end)] : [] }
}

const logIndexKey = Buffer.from('"logIndex"')

/** How many logs a chunk's parts hold: each log has one `logIndex`. */
function countLogs(parts: Buffer[]): number {
  let count = 0
  for (const part of parts) {
    for (let at = part.indexOf(logIndexKey); at !== -1; at = part.indexOf(logIndexKey, at + 1)) count++
  }
  return count
}

function mergedAnswer(id: RpcId, parts: Buffer[]): Buffer {
  const pieces: Buffer[] = [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":[`)]
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) pieces.push(comma)
    pieces.push(parts[index] as Buffer)
  }
  pieces.push(closing)
  return Buffer.concat(pieces)
}

const comma = Buffer.from(',')
const closing = Buffer.from(']}')

function bodyOf(id: RpcId, filter: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [filter] })
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`
}

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}
