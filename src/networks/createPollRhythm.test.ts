import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createPollRhythm, quickPollMs } from './createPollRhythm.ts'

const pollMs = 1_000
const hex = (value: number) => `0x${value.toString(16)}`

type Chain = {
  /** When the node has block `number` (ms on the polls' clock), or undefined: it never comes. */
  arrival(number: number): number | undefined
  /** Block `number`'s timestamp, seconds. */
  timestamp(number: number): number
  lastBlock: number
}

/** A chain with a block every `intervalMs` from `offsetMs` on, each `jitter(number)` ms late. */
function regularChain(intervalMs: number, lastBlock: number, jitter = (_number: number) => 0): Chain {
  return {
    arrival: (number) => 300 + number * intervalMs + jitter(number),
    timestamp: (number) => 1_700_000_000 + (number * intervalMs) / 1_000,
    lastBlock,
  }
}

/**
 * The head tracker's loop for one member, on a fake clock: a poll every pollMs, and the rhythm's
 * quick polls in between; each poll answers the newest block the node has. Returns every poll's
 * time and when each block was first seen.
 */
function simulate(
  chain: Chain,
  untilMs: number,
  everyMs = pollMs,
  rhythm = createPollRhythm({ pollMs: everyMs }),
) {
  const polls: number[] = []
  const seenAt = new Map<number, number>()
  let now = 0
  let lastPoll = Number.NEGATIVE_INFINITY
  for (;;) {
    now = Math.min(rhythm.nextPollAt(now) ?? Number.POSITIVE_INFINITY, Math.max(now, lastPoll + everyMs))
    if (now > untilMs) break
    lastPoll = now
    polls.push(now)
    let newest = 0
    for (let number = 1; number <= chain.lastBlock; number++) {
      const arrival = chain.arrival(number)
      if (arrival !== undefined && arrival <= now) newest = number
    }
    rhythm.heard(now, { number: hex(newest), timestamp: hex(chain.timestamp(newest)) })
    if (!seenAt.has(newest)) seenAt.set(newest, now)
  }
  /** How long after the node had it block `number` was seen. */
  const lateness = (number: number) => (seenAt.get(number) as number) - (chain.arrival(number) as number)
  /** Polls made while blocks `from` to `to` came. */
  const pollsBetween = (from: number, to: number) =>
    polls.filter((at) => at > (seenAt.get(from) as number) && at <= (seenAt.get(to) as number)).length
  return { polls, seenAt, lateness, pollsBetween, rhythm }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index)

/** A fixed pseudo-random jitter in [-amplitude, amplitude] ms. */
const jitterOf = (amplitude: number) => (number: number) =>
  Math.round(Math.sin(number * 12.9898) * 43_758.5453 * 1_000) % (amplitude + 1)

describe('createPollRhythm', () => {
  it('no rhythm until blocks were seen: the fixed poll only', () => {
    const rhythm = createPollRhythm({ pollMs })
    assert.equal(rhythm.nextPollAt(0), undefined)
    rhythm.heard(0, { number: '0x1', timestamp: hex(1_000) })
    rhythm.heard(1_000, { number: '0x2', timestamp: hex(1_002) })
    rhythm.heard(2_000, { number: '0x2', timestamp: hex(1_002) })
    assert.equal(rhythm.nextPollAt(2_000), undefined, 'one gap is no rhythm')
  })

  it('2 s blocks: within a few blocks each one is seen within a quick poll, at under 2 polls a second', () => {
    const chain = regularChain(2_000, 40)
    const { lateness, pollsBetween } = simulate(chain, 82_000)
    for (const number of range(10, 40))
      assert.ok(lateness(number) <= quickPollMs / 2, `block ${number}: ${lateness(number)} ms late`)
    const perBlock = pollsBetween(10, 40) / 30
    assert.ok(perBlock <= 3, `${perBlock} polls a block`)
    // the fixed poll alone: half the polls, blocks seen half a poll late on average
    const fixed = simulate(chain, 82_000, pollMs, { heard: () => undefined, nextPollAt: () => undefined })
    assert.ok(fixed.pollsBetween(10, 40) / 30 >= 2)
    const mean = range(10, 40).reduce((sum, number) => sum + fixed.lateness(number), 0) / 31
    assert.ok(mean > 4 * quickPollMs, `fixed: ${mean} ms late on average`)
  })

  it('blocks that come ±30 ms off their beat: seen within 2 quick polls, at most 2 polls a second', () => {
    const { lateness, pollsBetween } = simulate(regularChain(2_000, 60, jitterOf(30)), 122_000)
    const late = range(10, 60).map(lateness)
    assert.ok(
      late.every((ms) => ms <= 2 * quickPollMs),
      late.join(' '),
    )
    const mean = late.reduce((sum, ms) => sum + ms, 0) / late.length
    assert.ok(mean < quickPollMs, `${mean} ms late on average`)
    assert.ok(pollsBetween(10, 60) / 50 <= 4, `${pollsBetween(10, 60) / 50} polls a block`)
  })

  it('12 s blocks with a missed slot: the block after it is seen on the next beat', () => {
    const base = regularChain(12_000, 20)
    // slot 12 is missed: blocks from 12 on come a slot later
    const chain: Chain = {
      ...base,
      arrival: (number) => base.arrival(number < 12 ? number : number + 1),
      timestamp: (number) => base.timestamp(number < 12 ? number : number + 1),
    }
    const { lateness, pollsBetween } = simulate(chain, 260_000)
    for (const number of range(8, 20))
      assert.ok(lateness(number) <= quickPollMs / 2, `block ${number}: ${lateness(number)} ms late`)
    // a poll a second today, and a few more around each block
    assert.ok(pollsBetween(8, 20) / 13 <= 16, `${pollsBetween(8, 20) / 13} polls a block`)
  })

  it('a chain that changes its phase is followed again within a few blocks', () => {
    const base = regularChain(2_000, 40)
    const chain: Chain = {
      ...base,
      arrival: (number) => (base.arrival(number) as number) + (number >= 20 ? 700 : 0),
    }
    const { lateness } = simulate(chain, 82_000)
    for (const number of range(24, 40))
      assert.ok(lateness(number) <= quickPollMs / 2, `block ${number}: ${lateness(number)} ms late`)
  })

  it('a stalled chain falls back to the fixed poll after two missed beats', () => {
    const base = regularChain(2_000, 30)
    // blocks stop after 15
    const chain: Chain = { ...base, arrival: (number) => (number <= 15 ? base.arrival(number) : undefined) }
    const { polls, seenAt, rhythm } = simulate(chain, 60_000)
    const stalledAt = (seenAt.get(15) as number) + 2 * 2_000 + 5 * quickPollMs
    const later = polls.filter((at) => at > stalledAt)
    assert.ok(later.length > 10)
    for (let index = 1; index < later.length; index++)
      assert.equal((later[index] as number) - (later[index - 1] as number), pollMs)
    assert.equal(rhythm.nextPollAt(60_000), undefined)
  })

  it('blocks on demand (irregular timestamps, several in one second): no rhythm', () => {
    const times = [0, 1, 1, 1, 5, 30, 31, 31, 90, 91]
    const rhythm = createPollRhythm({ pollMs })
    times.forEach((seconds, index) => {
      rhythm.heard(index * 1_000, { number: hex(index + 1), timestamp: hex(1_000 + seconds) })
      assert.equal(rhythm.nextPollAt(index * 1_000), undefined, `after block ${index + 1}`)
    })
  })

  it('blocks faster than the fixed poll: not polled faster', () => {
    const { polls } = simulate(regularChain(1_000, 30), 30_000, 2_000)
    for (let index = 1; index < polls.length; index++)
      assert.equal((polls[index] as number) - (polls[index - 1] as number), 2_000)
  })

  it('a head more than a block lower (the chain went back) starts the rhythm again; an answer older than one heard is ignored', () => {
    const rhythm = createPollRhythm({ pollMs })
    const seeBlock = (number: number, at: number) => {
      rhythm.heard(at - 100, { number: hex(number - 1), timestamp: hex(1_000 + 2 * (number - 1)) })
      rhythm.heard(at, { number: hex(number), timestamp: hex(1_000 + 2 * number) })
    }
    for (let number = 1; number <= 6; number++) seeBlock(number, number * 2_000)
    assert.equal(rhythm.nextPollAt(12_000), 13_950)
    // an answer to a poll sent before the newest one heard: nothing new
    rhythm.heard(11_000, { number: hex(2), timestamp: hex(1_004) })
    assert.equal(rhythm.nextPollAt(12_000), 13_950)
    // a block lower: a backend a block behind, not a rewind
    rhythm.heard(12_200, { number: hex(5), timestamp: hex(1_010) })
    assert.equal(rhythm.nextPollAt(12_200), 13_950)
    rhythm.heard(12_500, { number: hex(4), timestamp: hex(1_008) })
    assert.equal(rhythm.nextPollAt(12_500), undefined)
  })

  it('answers without a timestamp teach nothing', () => {
    const rhythm = createPollRhythm({ pollMs })
    for (let number = 1; number <= 8; number++) rhythm.heard(number * 2_000, { number: hex(number) })
    assert.equal(rhythm.nextPollAt(16_000), undefined)
  })
})
