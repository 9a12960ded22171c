const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 })

export const formatInteger = (value: number) => integer.format(value)
export const formatDecimal = (value: number) => decimal.format(value)
export const formatPercent = (value: number | null) =>
  value === null ? '–' : `${decimal.format(value * 100)}%`

/** `2026-11-22T13` (an hour) or `2026-11-22` (a day) as epoch milliseconds, UTC. */
export function periodStartMs(period: string): number {
  return Date.parse(period.length === 13 ? `${period}:00:00Z` : `${period}T00:00:00Z`)
}
