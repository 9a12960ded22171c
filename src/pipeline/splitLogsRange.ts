import { splitAnswer } from '../cache/createRpcCache.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import type { RpcId } from '../jsonrpc/types.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { SendOptions } from '../upstreams/createUpstreamPool.ts'
import { findNodeErrorRule, type NodeError, readNodeError } from '../upstreams/nodeErrors.ts'
import { type RangeLimit, readRangeLimit } from '../upstreams/readRangeLimit.ts'

/** An eth_getLogs query by block range: its filter as sent on, and its first and last block, known exactly. */
export type LogsQuery = { filter: Record<string, unknown>; first: bigint; last: bigint }

/** Chunks asked at once. */
const parallelChunks = 4
/** The most upstream calls one query is split into, refusals of chunks included: past it, the refusal is the answer. */
export const maxChunkCalls = 200

/** Per network, the widest range every upstream has answered since it said so (a stated limit, never a suggestion). */
const learnedBlocks = new WeakMap<Network, bigint>()

/**
 * Whether a query is wider than what the network's upstreams have said they answer: it is split at
 * once, without a first refused call.
 */
export function splitsAtOnce(network: Network, query: LogsQuery): boolean {
  const learned = learnedBlocks.get(network)
  return learned !== undefined && query.last - query.first + 1n > learned
}

/** The node's error when `answer` is an eth_getLogs range refusal tollgate may split (nodeErrors.ts `splitsRange`). */
export function rangeRefusalOf(answer: Buffer): NodeError | undefined {
  const error = readNodeError(answer)
  return error && findNodeErrorRule(error)?.splitsRange ? error : undefined
}

/**
 * The chunks of `first`..`last` a refusal stating `limit` asks for: ranges of the suggested or the
 * stated width (the narrower), else two halves; none when it cannot be split (one block).
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
 * data, say) when one answers one. A stated limit is remembered for the network (splitsAtOnce).
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
): Promise<Buffer> {
  const error = refusal ? readNodeError(refusal) : undefined
  const limit: RangeLimit = error
    ? readRangeLimit(typeof error.message === 'string' ? error.message : '')
    : { limitBlocks: learnedBlocks.get(network) as bigint }
  learn(network, limit)
  const plan = planChunks(query.first, query.last, limit)
  if (plan.length === 0 || plan.length > maxChunkCalls)
    return refusal ?? (await wholeRange(network, query, id, options))
  const split = new Split(network, query.filter, options)
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
    return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error: err.answer }))
  }
}

/** The query as one call, when a split decided on at once (a learned limit) turns out not to be possible. */
function wholeRange(network: Network, query: LogsQuery, id: RpcId, options: SendOptions): Promise<Buffer> {
  return network.pool.send(bodyOf(id, query.filter), options)
}

function learn(network: Network, { limitBlocks }: RangeLimit): void {
  if (limitBlocks === undefined) return
  const learned = learnedBlocks.get(network)
  if (learned === undefined || limitBlocks < learned) learnedBlocks.set(network, limitBlocks)
}

/**
 * Ends a split: with the node's error for the client (`answer`), without one when the range cannot
 * be split as far as the refusals ask (the first refusal is the answer then), or (`enough`) once the
 * first chunks hold more logs than the network's result limit.
 */
class Stop extends Error {
  constructor(
    readonly answer: NodeError | undefined,
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
  ) {}

  /** The logs of `from`..`to` as parts of a JSON array's text, in block order. */
  async fetchRange(from: bigint, to: bigint): Promise<Buffer[]> {
    const answer = await this.limited(() => this.fetchChunk(from, to))
    if ('parts' in answer) return answer.parts
    const { error } = answer
    const rule = findNodeErrorRule(error)
    if (!rule?.splitsRange) throw this.stop(error)
    const limit = readRangeLimit(typeof error.message === 'string' ? error.message : '')
    learn(this.network, limit)
    const plan = planChunks(from, to, limit)
    if (plan.length === 0 || this.calls + plan.length > maxChunkCalls) throw this.stop(undefined)
    return (await Promise.all(plan.map(([start, end]) => this.fetchRange(start, end)))).flat()
  }

  stop(answer: NodeError | undefined, enough = false): Stop {
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

  /** One chunk's logs, or the error a node answered for it. */
  async fetchChunk(from: bigint, to: bigint): Promise<{ parts: Buffer[] } | { error: NodeError }> {
    const filter = { ...this.filter, fromBlock: hex(from), toBlock: hex(to) }
    const { cache, heads } = this.network
    const finalized = heads.finalized()
    let answer: Buffer
    if (cache && finalized !== undefined && to <= finalized) {
      // the same key as a client's own call for this chunk
      const key = `eth_getLogs${JSON.stringify([filter])}`
      const hit = cache.get(key, 'immutable', 1)
      if (hit !== undefined) answer = hit instanceof AnswerParts ? hit.toBuffer() : Buffer.from(hit)
      else {
        const loaded = await cache.load(key, 'immutable', async () => ({
          body: await this.network.pool.send(bodyOf(1, filter), this.options),
          partner: false,
        }))
        if ('answer' in loaded) return errorOf(loaded.answer)
        return partsOf(loaded.result)
      }
    } else answer = await this.network.pool.send(bodyOf(1, filter), this.options)
    let split: ReturnType<typeof splitAnswer>
    try {
      split = splitAnswer(answer)
    } catch {
      return { error: { code: -32603, message: 'an eth_getLogs answer that is not JSON' } }
    }
    return 'answer' in split ? errorOf(split.answer) : partsOf(split.result)
  }
}

function errorOf(answer: Buffer): { error: NodeError } {
  return {
    error: readNodeError(answer) ?? { code: -32603, message: 'an eth_getLogs answer without a result' },
  }
}

/** The logs of a result (`[…]`) as the text between its brackets: none for `[]`, an error for anything else. */
function partsOf(result: string | Buffer): { parts: Buffer[] } | { error: NodeError } {
  const text = typeof result === 'string' ? Buffer.from(result) : result
  let start = 0
  let end = text.length
  while (start < end && isBlank(text[start] as number)) start++
  while (end > start && isBlank(text[end - 1] as number)) end--
  if (text[start] !== 0x5b || text[end - 1] !== 0x5d) {
    return { error: { code: -32603, message: 'an eth_getLogs result that is not a list' } }
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
