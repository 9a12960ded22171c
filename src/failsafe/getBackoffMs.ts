export type BackoffPolicy = {
  /** The pause before the first retry. */
  baseMs: number
  /** Each further retry's pause is this many times the one before. */
  factor: number
  maxMs: number
  /** 0..1: each pause is lengthened by up to this share of it, at random, so that callers retrying together spread out. */
  jitter: number
}

/**
 * The pause before retry number `retry` (1 for the first): exponential from `baseMs`, plus a random
 * share of up to `jitter` of it, capped at `maxMs`. `random` returns 0..1 (Math.random unless a test
 * fixes it).
 */
export function getBackoffMs(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const pause = policy.baseMs * policy.factor ** Math.max(0, retry - 1)
  return Math.min(policy.maxMs, pause * (1 + policy.jitter * random()))
}
