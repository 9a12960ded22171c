import { type BlockSummary, isQuantity } from '../upstreams/fetchBlock.ts'

/**
 * When to poll the member that leads the chain, from the chain's own rhythm: blocks that come every
 * T ms are looked for just before and at the moment the next one is due, and every quickPollMs
 * after that while it has not come; in between, the fixed poll (pollMs) does. Without a rhythm
 * (too few blocks heard, irregular timestamps, blocks faster than pollMs, or a chain that missed
 * missedBeats blocks in a row: stalled) there is no quick poll, only the fixed one.
 */
export type PollRhythm = {
  /**
   * A poll of the leading member sent at `sentAt` (the polls' clock, ms) answered with its latest
   * block: a new one tells when the node had it, no newer one tells it had not.
   */
  heard(sentAt: number, block: BlockSummary): void
  /** The next quick poll's time after `now`, or undefined: none planned (the fixed poll only). */
  nextPollAt(now: number): number | undefined
}

export type PollRhythmOptions = {
  /** The fixed poll's interval: a chain whose blocks come faster than it is not polled faster. */
  pollMs: number
}

/**
 * The spacing of the polls after the moment a block was due and had not come.
 * @internal exported for its tests
 */
export const quickPollMs = 50
/** Polls every quickPollMs after a block was due, before waiting for the next beat. */
const latePolls = 4
/** The beats after the newest block polled for: the next block may skip a slot; missing these is a stall. */
const missedBeats = 2
/** The blocks the rhythm is learned from. */
const keptBlocks = 8
/** Consecutive blocks' timestamp differences needed before a rhythm is trusted. */
const minGaps = 3

/**
 * A block first seen by a poll: its number, timestamp (ms), and the moments between which the node
 * came to have it (`after`: the last poll that did not see it; `by`: the one that did; in the
 * polls' send times, so a constant network delay cancels out).
 */
type SeenBlock = { number: bigint; timestampMs: number; after: number | undefined; by: number }

/**
 * The rhythm of one network's head polls. The interval comes from block timestamps (seconds: the
 * mean of consecutive blocks' differences near their median, so a missed slot does not stretch
 * it); the phase from when polls first saw each block, since whole-second timestamps cannot place
 * a block within its second. Each block seen gives a span its arrival lies in; shifted by whole
 * intervals onto the newest block, the newest spans that overlap narrow where the next one is due.
 */
export function createPollRhythm(options: PollRhythmOptions): PollRhythm {
  const { pollMs } = options
  let blocks: SeenBlock[] = []
  /** The newest poll heard that saw no new block. */
  let missedAt: number | undefined
  /** The newest poll heard: an answer to an older one (sent before it) says nothing new. */
  let heardAt: number | undefined

  /** The block interval, ms, when the blocks kept come at a regular one of a second or more. */
  function intervalMs(): number | undefined {
    const gaps: number[] = []
    for (let index = 1; index < blocks.length; index++) {
      const [before, after] = [blocks[index - 1] as SeenBlock, blocks[index] as SeenBlock]
      if (after.number === before.number + 1n) gaps.push(after.timestampMs - before.timestampMs)
    }
    if (gaps.length < minGaps) return undefined
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] as number
    if (median < 1_000) return undefined
    const regular = gaps.filter((gap) => Math.abs(gap - median) <= 1_000)
    if (regular.length * 4 < gaps.length * 3) return undefined
    return regular.reduce((sum, gap) => sum + gap, 0) / regular.length
  }

  /**
   * The span the newest block came in, (after, by]: the newest blocks' spans shifted onto it by whole
   * intervals and intersected, as far back as they agree (a block late or early starts it again).
   */
  function newestArrival(interval: number): { after: number; by: number } | undefined {
    const newest = blocks.at(-1)
    if (!newest) return undefined
    let [after, by] = [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]
    for (let index = blocks.length - 1; index >= 0; index--) {
      const block = blocks[index] as SeenBlock
      if (block.after === undefined) continue
      const shift = Math.round((newest.timestampMs - block.timestampMs) / interval) * interval
      const [from, to] = [Math.max(after, block.after + shift), Math.min(by, block.by + shift)]
      if (from >= to) break
      ;[after, by] = [from, to]
    }
    return by === Number.POSITIVE_INFINITY ? undefined : { after, by }
  }

  /**
   * The polls for a block due in (after, by]: one before (halfway, so a wide span narrows, or half
   * a quick poll before), one when it is due at the latest, then every quickPollMs a few times.
   */
  function pollTimes(after: number, by: number): number[] {
    const times = [Math.min((after + by) / 2, by - quickPollMs / 2), by]
    for (let late = 1; late <= latePolls; late++) times.push(by + late * quickPollMs)
    return times
  }

  return {
    heard(sentAt, block) {
      if (heardAt !== undefined && sentAt < heardAt) return
      heardAt = sentAt
      if (!isQuantity(block.timestamp)) return
      const number = BigInt(block.number)
      const newest = blocks.at(-1)
      if (newest && number <= newest.number) {
        // one block lower is a load-balanced node's backend a block behind, as often as not: it
        // says nothing of the next block; more is the chain going back, its rhythm learned again
        if (number + 1n < newest.number) blocks = []
        if (number + 1n !== newest.number) missedAt = sentAt
        return
      }
      const timestampMs = Number(BigInt(block.timestamp)) * 1_000
      blocks.push({ number, timestampMs, after: missedAt, by: sentAt })
      if (blocks.length > keptBlocks) blocks.shift()
      // the poll that saw it is one the next block had not come by
      missedAt = sentAt
    },
    nextPollAt(now) {
      const interval = intervalMs()
      if (interval === undefined || interval < pollMs) return undefined
      const arrival = newestArrival(interval)
      if (!arrival) return undefined
      for (let beat = 1; beat <= missedBeats; beat++) {
        const shift = beat * interval
        for (const at of pollTimes(arrival.after + shift, arrival.by + shift)) if (at > now) return at
      }
      return undefined
    },
  }
}
