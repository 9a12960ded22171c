import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import type { CallGuard } from './authorize.ts'
import { createFilterIds, type FilterOwner } from './createFilterIds.ts'

const nodeId = '0x327a3162696d7646706f3565776a724d'
const owner: FilterOwner = { keyId: 7, network: 'devnet', guard: undefined }
const a = `0x${'aa'.repeat(20)}`
const b = `0x${'bb'.repeat(20)}`
const narrowed = (...contracts: string[]): CallGuard => ({ methods: [], contracts: [new Set(contracts)] })

describe('createFilterIds', () => {
  const hashKey = randomBytes(32)
  const ids = createFilterIds(hashKey)

  it('seals the node id into a longer 0x hex id that opens to it for its owner', () => {
    const sealed = ids.seal(nodeId, owner)
    assert.match(sealed, /^0x[0-9a-f]{64}$/)
    assert.ok(sealed.startsWith(nodeId))
    assert.equal(ids.open(sealed, owner), nodeId)
    assert.equal(ids.open(sealed, { ...owner }), nodeId, 'any instance with the same hash key')
    assert.equal(createFilterIds(Buffer.from(hashKey)).open(sealed, owner), nodeId)
    assert.equal(ids.open(ids.seal('0x1', owner), owner), '0x1', 'short node ids too')
  })

  it('does not open for another key, network, hash key or contract allowlist', () => {
    const sealed = ids.seal(nodeId, owner)
    assert.equal(ids.open(sealed, { ...owner, keyId: 8 }), undefined)
    assert.equal(ids.open(sealed, { ...owner, network: 'mainnet' }), undefined)
    assert.equal(createFilterIds(randomBytes(32)).open(sealed, owner), undefined)
    assert.equal(ids.open(sealed, { ...owner, guard: narrowed(a) }), undefined)
    const underA = ids.seal(nodeId, { ...owner, guard: narrowed(a) })
    assert.equal(ids.open(underA, { ...owner, guard: narrowed(a) }), nodeId)
    assert.equal(ids.open(underA, { ...owner, guard: narrowed(a, b) }), undefined, 'the allowlist changed')
    assert.equal(ids.open(underA, owner), undefined)
    // a guard of methods only is no contract allowlist
    assert.equal(ids.open(sealed, { ...owner, guard: { methods: [new Set(['x'])], contracts: [] } }), nodeId)
  })

  it('does not open ids it did not seal, nor tampered ones', () => {
    const sealed = ids.seal(nodeId, owner)
    const flipped = `${sealed.slice(0, -1)}${sealed.endsWith('0') ? '1' : '0'}`
    for (const id of [
      nodeId,
      flipped,
      `0x0${sealed.slice(2)}`,
      `${sealed}00`,
      '0x',
      sealed.slice(0, 34),
      'filter',
    ]) {
      assert.equal(ids.open(id, owner), undefined, id)
    }
    assert.equal(ids.open(`0x${'zz'.repeat(32)}`, owner), undefined)
  })
})
