import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogMatcher, type LogFilter } from './createLogMatcher.ts'

const a = `0x${'aa'.repeat(20)}`
const b = `0x${'bb'.repeat(20)}`
const t1 = `0x${'01'.repeat(32)}`
const t2 = `0x${'02'.repeat(32)}`
const t3 = `0x${'03'.repeat(32)}`
const log = { address: a, topics: [t1, t2] }
const matches = (filter: LogFilter, item = log) => createLogMatcher(filter)(item)
const upper = (hex: string) => `0x${hex.slice(2).toUpperCase()}`

describe('createLogMatcher', () => {
  it('addresses: one or many, case-insensitive; none given matches all', () => {
    assert.equal(matches({}), true)
    assert.equal(matches({ address: upper(a) }), true)
    assert.equal(matches({ address: [b, a] }), true)
    assert.equal(matches({ address: b }), false)
    assert.equal(matches({ address: [] }), true)
    assert.equal(matches({ address: a }, { address: upper(a), topics: [] }), true)
  })

  it('topics: positions, null wildcards, OR arrays, more topics than the log has', () => {
    assert.equal(matches({ topics: [t1] }), true)
    assert.equal(matches({ topics: [null, t2] }), true)
    assert.equal(matches({ topics: [[t3, t1], [upper(t2)]] }), true)
    assert.equal(matches({ topics: [t2] }), false)
    assert.equal(matches({ topics: [[t3], null] }), false)
    assert.equal(matches({ topics: [null, null, t3] }), false)
    assert.equal(matches({ topics: [null, null, null] }), true)
    // a null among alternatives matches anything there, as in geth
    assert.equal(matches({ topics: [[t3, null]] }), true)
    assert.equal(matches({ topics: [[]] }), true)
  })

  it('reads the filter once: matching does not look at the lists again', () => {
    const address = [b, a]
    const topics: (string | string[] | null)[] = [[t3, t1]]
    const matcher = createLogMatcher({ address, topics })
    // the lists changed (or were thrown away) after subscribing: the matcher keeps what it prepared
    address.length = 0
    topics[0] = t3
    assert.equal(matcher(log), true)
    assert.equal(matcher({ address: b, topics: [t1] }), true)
    assert.equal(matcher({ address: b, topics: [t2] }), false)
  })

  it('costs the same per log whatever the lists length: no scan of 1000 addresses and topics', () => {
    // Set lookups read no item but the one hashed: a list of proxies that count their reads shows it
    let reads = 0
    const counted = <T>(items: T[]): T[] =>
      new Proxy(items, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++
          return Reflect.get(target, key, receiver)
        },
      })
    const many = Array.from({ length: 1000 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`)
    const manyTopics = Array.from({ length: 1000 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`)
    const matcher = createLogMatcher({
      address: counted([...many, a]),
      topics: [counted([...manyTopics, t1])],
    })
    const prepared = reads
    for (let i = 0; i < 100; i++) assert.equal(matcher(log), true)
    assert.equal(matcher({ address: b, topics: [t1] }), false)
    assert.equal(reads, prepared)
  })
})
