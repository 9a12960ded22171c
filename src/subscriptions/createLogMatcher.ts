/** A log subscription's filter, as validated by eth_subscribe: address one or many, topics with null and OR arrays. */
export type LogFilter = {
  address?: string | string[] | null
  topics?: (string | (string | null)[] | null)[] | null
}

export type Log = { address: string; topics: string[]; [field: string]: unknown }

/** Whether a log matches the filter the matcher was made from. */
export type LogMatcher = (log: Log) => boolean

/**
 * A filter's matcher, with eth_getLogs' rules (case-insensitive hex), prepared once at subscribe
 * time: the addresses, and each topic position's alternatives, as Sets of lowercased hex
 * (undefined where anything matches). Matching a log then costs a lowercase and a lookup per
 * field, however long the filter's lists are.
 */
export function createLogMatcher(filter: LogFilter): LogMatcher {
  const addresses = wantedSet(filter.address)
  const positions = (filter.topics ?? []).map(wantedSet)
  // trailing wildcards ask nothing of a log
  while (positions.length > 0 && positions[positions.length - 1] === undefined) positions.pop()
  return (log) => {
    if (addresses !== undefined && !addresses.has(log.address.toLowerCase())) return false
    for (let position = 0; position < positions.length; position++) {
      const wanted = positions[position]
      if (wanted === undefined) continue
      const topic = log.topics[position]
      if (topic === undefined || !wanted.has(topic.toLowerCase())) return false
    }
    return true
  }
}

/** The lowercased values a field accepts; undefined when it accepts anything (absent, null, empty, or holding null). */
function wantedSet(value: string | (string | null)[] | null | undefined): Set<string> | undefined {
  if (value === undefined || value === null) return undefined
  const items = Array.isArray(value) ? value : [value]
  if (items.length === 0 || items.includes(null)) return undefined
  return new Set((items as string[]).map((item) => item.toLowerCase()))
}
