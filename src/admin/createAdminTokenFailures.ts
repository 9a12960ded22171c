import { type AuthFailureLimiter, createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'

/** Wrong admin tokens a client address may try at once, and how many more per minute after that. */
const burst = 10
const perMinute = 10

/** The "key" every wrong admin token counts against (the limiter's per-key bucket). */
export const adminTokenKeyId = 0

/**
 * Wrong admin tokens, counted per client address (an IPv6 /64) across `/admin` and the dashboard's
 * sign-in alike: 10 at once, then 10 a minute, after which both answer 429 with Retry-After without
 * looking at the token.
 */
export function createAdminTokenFailures(now: () => number): AuthFailureLimiter {
  return createAuthFailureLimiter({ burst, perMinute, now })
}
