import { Buffer } from 'node:buffer'
import { LogResultsLimitError } from '../errors/limitErrors.ts'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import type { Network } from '../networks/createNetwork.ts'

/** Checks an eth_getLogs answer against the network's result limit; throws LogResultsLimitError. */
export type LogsAnswerCheck = (answer: Buffer) => void

/** A query within the network's limits: the check for its answer, and its blocks. */
export type BoundedLogs = {
  check: LogsAnswerCheck
  /**
   * Its first and last block where both are known exactly: a number, `earliest`, `latest` and
   * `pending` (and a missing bound) as the network's head, `finalized`; undefined for a `blockHash`
   * query, for `safe`, and while no head is known.
   */
  blocks: readonly [bigint, bigint] | undefined
}

/** No log is shorter than this (address, topics, data, block and transaction fields): shorter answers are not counted. */
const minLogBytes = 128
const logIndexKey = Buffer.from('"logIndex"')
const blockNumberKey = Buffer.from('"blockNumber"')

/**
 * eth_getLogs (and trace_filter, whose answer holds no logs to count) within the network's limits
 * (docs/compatibility.md §7): a `fromBlock`..`toBlock` range
 * wider than `maxLogsBlockRange` is refused with -32602 before any node is asked (tags are read
 * against the network's head; a `blockHash` query has no range). Returns the check for the answer:
 * more than `maxLogsResults` logs is refused with -32005 and a smaller range to try, as the hosted
 * service does. Logs are counted in the answer's bytes, and only in answers long enough to hold
 * that many.
 */
export async function boundLogs(network: Network, filter: unknown): Promise<BoundedLogs> {
  const { blockHash, fromBlock, toBlock } = (filter ?? {}) as Record<string, unknown>
  let from: bigint | undefined
  let blocks: BoundedLogs['blocks']
  if (typeof blockHash !== 'string') {
    from = await blockNumberOf(network, fromBlock, 'from')
    const to = await blockNumberOf(network, toBlock, 'to')
    if (from !== undefined && to !== undefined && to - from + 1n > BigInt(network.maxLogsBlockRange)) {
      throw new InvalidParamsError(
        `invalid argument 0: block range too large, the limit is ${network.maxLogsBlockRange} blocks`,
      )
    }
    const first = exactBlockOf(network, fromBlock)
    const last = exactBlockOf(network, toBlock)
    if (first !== undefined && last !== undefined) blocks = [first, last]
  }
  const limit = network.maxLogsResults
  const check: LogsAnswerCheck = (answer) => {
    if (answer.length <= limit * minLogBytes) return
    // the first log past the limit, if there is one
    let at = -1
    for (let count = 0; count <= limit; count++) {
      at = answer.indexOf(logIndexKey, at + 1)
      if (at === -1) return
    }
    if (typeof blockHash === 'string') throw new LogResultsLimitError(limit)
    // logs come in block order: every block before this log's is within the limit
    const block = blockNumberAround(answer, at)
    const start = from ?? block
    if (block === undefined || start === undefined) throw new LogResultsLimitError(limit)
    throw new LogResultsLimitError(limit, [start, block > start ? block - 1n : start])
  }
  return { check, blocks }
}

/** A filter's block as the node would read it, where tollgate knows it exactly (the head already polled). */
function exactBlockOf(network: Network, ref: unknown): bigint | undefined {
  const tag = ref ?? 'latest'
  if (typeof tag !== 'string') return undefined
  if (tag.startsWith('0x')) return BigInt(tag)
  if (tag === 'earliest') return 0n
  if (tag === 'latest' || tag === 'pending') return network.head.latest()?.number
  if (tag === 'finalized') return network.head.finalized()
  return undefined
}

/**
 * A filter's block as a number: tags from the network's head. Where it only bounds a tag
 * (safe lies between finalized and latest), the bound that makes the range shorter is taken, so a
 * range is never refused for being counted long; undefined when nothing is known yet.
 */
async function blockNumberOf(
  network: Network,
  ref: unknown,
  end: 'from' | 'to',
): Promise<bigint | undefined> {
  const tag = ref ?? 'latest'
  if (tag === 'earliest') return 0n
  if (typeof tag !== 'string') return undefined
  if (tag.startsWith('0x')) return BigInt(tag)
  if (!network.head.latest()) await network.head.poll()
  const head = network.head.latest()?.number
  const finalized = network.head.finalized()
  if (tag === 'latest' || tag === 'pending') return head
  if (tag === 'finalized') return finalized ?? (end === 'from' ? head : undefined)
  // safe
  return end === 'from' ? head : finalized
}

/** The `blockNumber` of the log object around byte `at` (logs hold arrays, never nested objects). */
function blockNumberAround(answer: Buffer, at: number): bigint | undefined {
  const start = answer.lastIndexOf(0x7b, at)
  const end = answer.indexOf(0x7d, at)
  let key = answer.indexOf(blockNumberKey, start)
  if (start === -1 || key === -1 || (end !== -1 && key > end)) return undefined
  key += blockNumberKey.length
  const open = answer.indexOf(0x22, key)
  const close = open === -1 ? -1 : answer.indexOf(0x22, open + 1)
  if (close === -1) return undefined
  const text = answer.toString('latin1', open + 1, close)
  return /^0x[0-9a-f]{1,16}$/i.test(text) ? BigInt(text) : undefined
}
