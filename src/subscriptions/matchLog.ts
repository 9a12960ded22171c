/** A log subscription's filter, as validated by eth_subscribe: address one or many, topics with null and OR arrays. */
export type LogFilter = {
  address?: string | string[] | null
  topics?: (string | (string | null)[] | null)[] | null
}

export type Log = { address: string; topics: string[]; [field: string]: unknown }

/** Whether a log matches a filter, with eth_getLogs' rules (case-insensitive hex). */
export function matchLog(filter: LogFilter, log: Log): boolean {
  const { address, topics } = filter
  if (address !== undefined && address !== null) {
    const wanted = (Array.isArray(address) ? address : [address]).map((item) => item.toLowerCase())
    if (wanted.length > 0 && !wanted.includes(log.address.toLowerCase())) return false
  }
  if (topics) {
    for (let index = 0; index < topics.length; index++) {
      const wanted = topics[index]
      if (wanted === null || wanted === undefined) continue
      const topic = log.topics[index]?.toLowerCase()
      if (topic === undefined) return false
      const options = (Array.isArray(wanted) ? wanted : [wanted]).filter(
        (item): item is string => item !== null,
      )
      if (options.length > 0 && !options.some((option) => option.toLowerCase() === topic)) return false
    }
  }
  return true
}
