import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { matchLog } from './matchLog.ts'

const a = `0x${'aa'.repeat(20)}`
const b = `0x${'bb'.repeat(20)}`
const t1 = `0x${'01'.repeat(32)}`
const t2 = `0x${'02'.repeat(32)}`
const t3 = `0x${'03'.repeat(32)}`
const log = { address: a, topics: [t1, t2] }

describe('matchLog', () => {
  it('addresses: one or many, case-insensitive; none given matches all', () => {
    assert.equal(matchLog({}, log), true)
    assert.equal(matchLog({ address: a.toUpperCase().replace('0X', '0x') }, log), true)
    assert.equal(matchLog({ address: [b, a] }, log), true)
    assert.equal(matchLog({ address: b }, log), false)
  })

  it('topics: positions, null wildcards, OR arrays, more topics than the log has', () => {
    assert.equal(matchLog({ topics: [t1] }, log), true)
    assert.equal(matchLog({ topics: [null, t2] }, log), true)
    assert.equal(matchLog({ topics: [[t3, t1], [t2]] }, log), true)
    assert.equal(matchLog({ topics: [t2] }, log), false)
    assert.equal(matchLog({ topics: [[t3], null] }, log), false)
    assert.equal(matchLog({ topics: [null, null, t3] }, log), false)
    assert.equal(matchLog({ topics: [null, null, null] }, log), true)
  })
})
