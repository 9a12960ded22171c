import type { PostgresPool } from '../store/createPostgresPool.ts'
import { withTransaction } from '../store/withTransaction.ts'
import type { FeeHistoryStore } from './feeHistoryStore.ts'

/** bigint and numeric columns arrive as text (exact), numeric[] is read as text[]. */
type Row = { number: string; base_fee: string; gas_used_ratio: number; rewards: string[] }

/** The fee history in PostgreSQL: wei amounts in numeric(78, 0), exact past 2^53. */
export function createPostgresFeeHistoryStore(pool: PostgresPool): FeeHistoryStore {
  return {
    async latest(chainId, head, count) {
      const { rows } = await pool.query<Row>(
        `SELECT number, base_fee::text AS base_fee, gas_used_ratio, rewards::text[] AS rewards FROM fee_history
         WHERE chain_id = $1 AND number <= $2 ORDER BY number DESC LIMIT $3`,
        [chainId, head, count],
      )
      return rows.reverse().map((row) => ({
        number: Number(row.number),
        baseFee: BigInt(row.base_fee),
        gasUsedRatio: row.gas_used_ratio,
        rewards: row.rewards.map(BigInt),
      }))
    },
    async storedNumbers(chainId, from, to) {
      const { rows } = await pool.query<{ number: string }>(
        'SELECT number FROM fee_history WHERE chain_id = $1 AND number BETWEEN $2 AND $3 ORDER BY number',
        [chainId, from, to],
      )
      return rows.map((row) => Number(row.number))
    },
    async upsert(chainId, blocks) {
      // one row per number (the last given wins): one upsert statement may not touch a row twice
      const unique = [...new Map(blocks.map((block) => [block.number, block])).values()].sort(
        (a, b) => a.number - b.number,
      )
      if (unique.length === 0) return
      await pool.query(
        `INSERT INTO fee_history (chain_id, number, base_fee, gas_used_ratio, rewards)
         SELECT $1, number, base_fee, gas_used_ratio, string_to_array(rewards, ',')::numeric[]
         FROM unnest($2::bigint[], $3::numeric[], $4::double precision[], $5::text[])
           AS given (number, base_fee, gas_used_ratio, rewards)
         ON CONFLICT (chain_id, number) DO UPDATE SET
           base_fee = excluded.base_fee, gas_used_ratio = excluded.gas_used_ratio, rewards = excluded.rewards`,
        [
          chainId,
          unique.map((block) => block.number),
          unique.map((block) => block.baseFee.toString()),
          unique.map((block) => block.gasUsedRatio),
          // one text per block: unnest flattens a two-dimensional array
          unique.map((block) => block.rewards.join(',')),
        ],
      )
    },
    async deleteFrom(chainId, from) {
      await withTransaction(pool, async (client) => {
        await client.query('DELETE FROM fee_history WHERE chain_id = $1 AND number >= $2', [chainId, from])
        await client.query('DELETE FROM fee_heads WHERE chain_id = $1 AND number >= $2', [chainId, from])
      })
    },
    async deleteBelow(chainId, number) {
      await pool.query('DELETE FROM fee_history WHERE chain_id = $1 AND number < $2', [chainId, number])
    },
    async getHeadHashes(chainId) {
      const { rows } = await pool.query<{ number: string; hash: string }>(
        'SELECT number, hash FROM fee_heads WHERE chain_id = $1',
        [chainId],
      )
      return new Map(rows.map((row) => [Number(row.number), row.hash]))
    },
    async setHeadHash(chainId, number, hash, keep) {
      await withTransaction(pool, async (client) => {
        await client.query(
          `INSERT INTO fee_heads (chain_id, number, hash) VALUES ($1, $2, $3)
           ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash`,
          [chainId, number, hash],
        )
        await client.query('DELETE FROM fee_heads WHERE chain_id = $1 AND number < $2', [
          chainId,
          number - keep,
        ])
      })
    },
    async getNextBaseFee(chainId) {
      const { rows } = await pool.query<{ head: string; base_fee: string }>(
        'SELECT head, base_fee::text AS base_fee FROM fee_next_base_fee WHERE chain_id = $1',
        [chainId],
      )
      const row = rows[0]
      return row ? { head: Number(row.head), baseFee: BigInt(row.base_fee) } : undefined
    },
    async setNextBaseFee(chainId, head, baseFee) {
      await pool.query(
        `INSERT INTO fee_next_base_fee (chain_id, head, base_fee) VALUES ($1, $2, $3)
         ON CONFLICT (chain_id) DO UPDATE SET head = excluded.head, base_fee = excluded.base_fee`,
        [chainId, head, baseFee.toString()],
      )
    },
  }
}
