import type { SqliteDatabase } from '../store/sqliteDatabase.ts'
import type { FeeBlock, FeeHistoryStore } from './feeHistoryStore.ts'

type Row = { number: number; base_fee: string; gas_used_ratio: number; rewards: string }

export function createSqliteFeeHistoryStore(db: SqliteDatabase): FeeHistoryStore {
  const selectLatest = db.prepare<[number, number, number], Row>(
    `SELECT number, base_fee, gas_used_ratio, rewards FROM fee_history
     WHERE chain_id = ? AND number <= ? ORDER BY number DESC LIMIT ?`,
  )
  const selectNumbers = db.prepare<[number, number, number], { number: number }>(
    'SELECT number FROM fee_history WHERE chain_id = ? AND number BETWEEN ? AND ? ORDER BY number',
  )
  const upsertRow = db.prepare<[number, number, string, number, string]>(
    `INSERT INTO fee_history (chain_id, number, base_fee, gas_used_ratio, rewards) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (chain_id, number) DO UPDATE SET
       base_fee = excluded.base_fee, gas_used_ratio = excluded.gas_used_ratio, rewards = excluded.rewards`,
  )
  const deleteFromRows = db.prepare<[number, number]>(
    'DELETE FROM fee_history WHERE chain_id = ? AND number >= ?',
  )
  const deleteBelowRows = db.prepare<[number, number]>(
    'DELETE FROM fee_history WHERE chain_id = ? AND number < ?',
  )
  const selectHashes = db.prepare<[number], { number: number; hash: string }>(
    'SELECT number, hash FROM fee_heads WHERE chain_id = ?',
  )
  const upsertHash = db.prepare<[number, number, string]>(
    `INSERT INTO fee_heads (chain_id, number, hash) VALUES (?, ?, ?)
     ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash`,
  )
  const pruneHashes = db.prepare<[number, number]>('DELETE FROM fee_heads WHERE chain_id = ? AND number < ?')
  const deleteHashesFrom = db.prepare<[number, number]>(
    'DELETE FROM fee_heads WHERE chain_id = ? AND number >= ?',
  )
  const selectMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?')
  const upsertMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  )
  const upsertMany = db.transaction((chainId: number, blocks: FeeBlock[]) => {
    for (const block of blocks) {
      upsertRow.run(
        chainId,
        block.number,
        block.baseFee.toString(),
        block.gasUsedRatio,
        block.rewards.join(','),
      )
    }
  })
  const nextKey = (chainId: number) => `gas:${chainId}:next_base_fee`

  return {
    async latest(chainId, head, count) {
      return selectLatest
        .all(chainId, head, count)
        .reverse()
        .map((row) => ({
          number: row.number,
          baseFee: BigInt(row.base_fee),
          gasUsedRatio: row.gas_used_ratio,
          rewards: row.rewards === '' ? [] : row.rewards.split(',').map(BigInt),
        }))
    },
    async storedNumbers(chainId, from, to) {
      return selectNumbers.all(chainId, from, to).map((row) => row.number)
    },
    async upsert(chainId, blocks) {
      upsertMany(chainId, blocks)
    },
    async deleteFrom(chainId, from) {
      deleteFromRows.run(chainId, from)
      deleteHashesFrom.run(chainId, from)
    },
    async deleteBelow(chainId, number) {
      deleteBelowRows.run(chainId, number)
    },
    async getHeadHashes(chainId) {
      return new Map(selectHashes.all(chainId).map((row) => [row.number, row.hash]))
    },
    async setHeadHash(chainId, number, hash, keep) {
      upsertHash.run(chainId, number, hash)
      pruneHashes.run(chainId, number - keep)
    },
    async getNextBaseFee(chainId) {
      const value = selectMeta.get(nextKey(chainId))?.value
      if (value === undefined) return undefined
      const [head, baseFee] = value.split(':')
      return { head: Number(head), baseFee: BigInt(baseFee as string) }
    },
    async setNextBaseFee(chainId, head, baseFee) {
      upsertMeta.run(nextKey(chainId), `${head}:${baseFee}`)
    },
  }
}
