/**
 * The thresholds (whole percents of `limit`) that `used` credits have reached, lowest first: a
 * threshold is reached once `used` is at least that share of the limit (100: the whole limit
 * spent). Several at once when one write of usage passed several. Integer math: no rounding makes
 * 75% of 1,000 credits come at 749.
 */
export function crossedThresholds(thresholds: readonly number[], used: number, limit: number): number[] {
  if (limit <= 0) return []
  return thresholds.filter((threshold) => used * 100 >= threshold * limit)
}
