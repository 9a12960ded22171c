import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import type { FeeBlock, FeeHistoryStore } from './feeHistoryStore.ts'

/** Past 2^53 and past 2^64: wei amounts must come back to the last wei. */
const huge = 2n ** 200n + 12_345n

function block(number: number, over: Partial<FeeBlock> = {}): FeeBlock {
  return {
    number,
    baseFee: 2n ** 60n + BigInt(number),
    gasUsedRatio: 0.5,
    rewards: [1n, 10n, 2n ** 54n + 1n, 300n, huge],
    ...over,
  }
}

for (const backend of storeBackends) {
  describe(`fee history store on ${backend.name}`, () => {
    let database: TestDatabase
    let store: FeeHistoryStore
    /** The same database as another gateway sees it. */
    let other: FeeHistoryStore
    before(async () => {
      database = await backend.createDatabase()
      store = (await database.open()).feeHistory
      other = (await database.open()).feeHistory
    })
    after(() => database?.remove())

    it('keeps blocks exactly, per chain; the latest at or below a head, oldest first', async () => {
      const empty = block(13, { gasUsedRatio: 0, rewards: [] })
      await store.upsert(1, [
        block(10),
        block(11, { baseFee: huge, gasUsedRatio: 0.123456789 }),
        block(12),
        empty,
      ])
      await store.upsert(2, [block(12, { baseFee: 7n })])
      assert.deepEqual(await other.latest(1, 12, 2), [
        block(11, { baseFee: huge, gasUsedRatio: 0.123456789 }),
        block(12),
      ])
      assert.deepEqual(await other.latest(1, 100, 10), [
        block(10),
        block(11, { baseFee: huge, gasUsedRatio: 0.123456789 }),
        block(12),
        empty,
      ])
      assert.deepEqual(await other.latest(2, 100, 10), [block(12, { baseFee: 7n })])
      assert.deepEqual(await other.latest(3, 100, 10), [])
      assert.deepEqual(await other.storedNumbers(1, 11, 12), [11, 12])
      assert.deepEqual(await other.storedNumbers(1, 0, 9), [])
    })

    it('an upsert replaces a stored block (a reorg); the last of a block given twice wins', async () => {
      await store.upsert(5, [block(1), block(2)])
      await store.upsert(5, [block(2, { baseFee: 1n }), block(3), block(3, { baseFee: 3n })])
      assert.deepEqual(await other.latest(5, 10, 10), [
        block(1),
        block(2, { baseFee: 1n }),
        block(3, { baseFee: 3n }),
      ])
      await store.upsert(5, [])
      assert.deepEqual(await other.storedNumbers(5, 0, 10), [1, 2, 3])
    })

    it('deletes from a block on (its head hashes too) and below a block', async () => {
      await store.upsert(6, [block(1), block(2), block(3), block(4)])
      for (const number of [1, 2, 3, 4]) await store.setHeadHash(6, number, `0x${number}`, 100)
      await store.deleteFrom(6, 3)
      assert.deepEqual(await other.storedNumbers(6, 0, 10), [1, 2])
      assert.deepEqual(
        await other.getHeadHashes(6),
        new Map([
          [1, '0x1'],
          [2, '0x2'],
        ]),
      )
      await store.deleteBelow(6, 2)
      assert.deepEqual(await other.storedNumbers(6, 0, 10), [2])
    })

    it('keeps the last `keep` head hashes; a hash seen again is replaced', async () => {
      for (let number = 1; number <= 6; number++) await store.setHeadHash(7, number, `0x${number}`, 3)
      await store.setHeadHash(7, 6, '0xreorged', 3)
      await store.setHeadHash(8, 1, '0xother', 3)
      assert.deepEqual(
        await other.getHeadHashes(7),
        new Map([
          [3, '0x3'],
          [4, '0x4'],
          [5, '0x5'],
          [6, '0xreorged'],
        ]),
      )
      assert.deepEqual(await other.getHeadHashes(9), new Map())
    })

    it('keeps the next base fee per chain, exactly', async () => {
      assert.equal(await other.getNextBaseFee(10), undefined)
      await store.setNextBaseFee(10, 100, huge)
      await store.setNextBaseFee(11, 5, 1n)
      assert.deepEqual(await other.getNextBaseFee(10), { head: 100, baseFee: huge })
      await store.setNextBaseFee(10, 101, 2n ** 53n + 1n)
      assert.deepEqual(await other.getNextBaseFee(10), { head: 101, baseFee: 2n ** 53n + 1n })
      assert.deepEqual(await other.getNextBaseFee(11), { head: 5, baseFee: 1n })
    })
  })
}
