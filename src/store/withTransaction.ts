import type { PoolClient } from 'pg'
import type { PostgresPool } from './createPostgresPool.ts'

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled back
 * when it throws (the error goes on). A connection whose rollback failed is closed, not reused.
 */
export async function withTransaction<T>(
  pool: PostgresPool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    try {
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: Error) => {
        broken = rollbackErr
      })
      throw err
    }
  } finally {
    client.release(broken)
  }
}
