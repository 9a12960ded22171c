/** Time for everything that depends on it (daily reset, token buckets), so tests can move it. */
export type Clock = { now(): number }

export const systemClock: Clock = { now: () => Date.now() }

const dayMs = 86_400_000

/** The UTC day (`2026-11-22`) and hour (`2026-11-22T13`) of a moment, and when the day ends. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

export function utcHour(ms: number): string {
  return new Date(ms).toISOString().slice(0, 13)
}

export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / dayMs) + 1) * dayMs
}
