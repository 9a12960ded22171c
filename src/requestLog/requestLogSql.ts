import type { RequestLogQuery } from './requestLogStore.ts'

/** The columns of a row as both stores select them, under the names of RequestLogRow. */
export const requestLogColumns = `id, time_ms AS "timeMs", account_id AS "accountId", key_id AS "keyId", network, method,
  outcome, status, code, error, reason, credits, duration_ms AS "durationMs", cache_hit AS "cacheHit", upstream,
  client_address AS "clientAddress", user_agent AS "userAgent", params, answer`

/**
 * The WHERE clause of a query and its values, with each value's placeholder made by `placeholder`
 * (`?` for SQLite, `$N` for PostgreSQL): only the filters the query sets.
 */
export function requestLogWhere(
  query: Omit<RequestLogQuery, 'limit'>,
  placeholder: (index: number) => string,
): { where: string; values: unknown[] } {
  const conditions: string[] = []
  const values: unknown[] = []
  const value = (item: unknown) => {
    values.push(item)
    return placeholder(values.length)
  }
  if (query.accountId !== undefined) conditions.push(`account_id = ${value(query.accountId)}`)
  if (query.keyIds !== undefined) {
    if (query.keyIds.length === 0) conditions.push('1 = 0')
    else conditions.push(`key_id IN (${query.keyIds.map(value).join(', ')})`)
  }
  if (query.network !== undefined) conditions.push(`network = ${value(query.network)}`)
  if (query.method !== undefined) conditions.push(`method = ${value(query.method)}`)
  if (query.outcome !== undefined) conditions.push(`outcome = ${value(query.outcome)}`)
  if (query.fromMs !== undefined) conditions.push(`time_ms >= ${value(query.fromMs)}`)
  if (query.toMs !== undefined) conditions.push(`time_ms < ${value(query.toMs)}`)
  if (query.before !== undefined) {
    const time = value(query.before.timeMs)
    const sameTime = value(query.before.timeMs)
    conditions.push(`(time_ms < ${time} OR (time_ms = ${sameTime} AND id < ${value(query.before.id)}))`)
  }
  return { where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, values }
}
