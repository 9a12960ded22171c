/** Nanoseconds in one of each unit Go's time.ParseDuration takes. */
const unitNs = new Map<string, bigint>([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n],
  ['μs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
])

/** A Go duration without a sign, as geth reads trace `timeout` ("10s", "1m30s", "500ms", "0"). */
const durationPattern = /^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|μs|ms|s|m|h))+)$/
const partPattern = /([0-9]+)(?:\.([0-9]+))?(ns|us|µs|μs|ms|s|m|h)/g

/**
 * A Go duration's length in nanoseconds, as Go's time.ParseDuration reads it (a fraction finer than
 * a nanosecond is dropped); throws on anything else (a sign, a bare number other than 0, an
 * unknown unit).
 */
export function parseGoDurationNs(text: string): bigint {
  if (!durationPattern.test(text)) throw new Error(`not a duration: ${text}`)
  let totalNs = 0n
  for (const [, whole, fraction, unit] of text.matchAll(partPattern)) {
    const ns = unitNs.get(unit as string) as bigint
    totalNs += BigInt(whole as string) * ns
    if (fraction !== undefined) totalNs += (BigInt(fraction) * ns) / 10n ** BigInt(fraction.length)
  }
  return totalNs
}
