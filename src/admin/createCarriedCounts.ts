type Carried<S> = {
  /** What counts for the name now. */
  source: S
  /** Its counts when last read. */
  read: readonly number[]
  /** Counted under the name since the first read, whatever counted it. */
  totals: number[]
}

/**
 * Running totals per name, kept across the objects that count them: a reload that rebuilds a network
 * makes a new cache and new upstream members, their counters at 0, and the totals go on from what
 * the ones before had counted. Each read adds what `source` counted since it was last read; when
 * another object has taken the name, the one before is read a last time (what it counted since)
 * and let go. Counts an object makes after that last read (a replaced network's last calls ending
 * as the next read comes) are not seen.
 */
export function createCarriedCounts<S extends object>(
  countsOf: (source: S) => readonly number[],
): (name: string, source: S) => readonly number[] {
  const carried = new Map<string, Carried<S>>()
  const add = (entry: Carried<S>, now: readonly number[]) => {
    now.forEach((count, index) => {
      entry.totals[index] = (entry.totals[index] ?? 0) + count - (entry.read[index] ?? 0)
    })
    entry.read = now
  }
  return (name, source) => {
    let entry = carried.get(name)
    if (entry === undefined) {
      entry = { source, read: [], totals: [] }
      carried.set(name, entry)
    } else if (entry.source !== source) {
      add(entry, countsOf(entry.source))
      entry.source = source
      entry.read = []
    }
    add(entry, countsOf(source))
    return entry.totals
  }
}
