import { z } from 'zod'

/** A plan's numbers (docs/compatibility.md §3). `null` daily/per-second numbers: set per account (custom). */
function planSchema(defaults: {
  dailyCredits: number | null
  creditsPerSecond: number | null
  keysPerAccount: number | null
  failover: boolean
  maxCallsInFlight: number
}) {
  return z
    .strictObject({
      dailyCredits: z.int().positive().nullable().default(defaults.dailyCredits),
      creditsPerSecond: z.int().positive().nullable().default(defaults.creditsPerSecond),
      /** null: unlimited */
      keysPerAccount: z.int().positive().nullable().default(defaults.keysPerAccount),
      failover: z.boolean().default(defaults.failover),
      /**
       * Each key's calls in flight at the upstreams, per process (docs/plans.md): past it a call
       * waits for one of them to end while a tenth of its deadline is left.
       */
      maxCallsInFlight: z.int().positive().default(defaults.maxCallsInFlight),
    })
    .prefault({})
}

/** Every plan's numbers (`plans` in the config), each defaulting to the hosted service's. */
export const plansSchema = z
  .strictObject({
    core: planSchema({
      dailyCredits: 3_000_000,
      creditsPerSecond: 500,
      keysPerAccount: 1,
      failover: false,
      maxCallsInFlight: 32,
    }),
    developer: planSchema({
      dailyCredits: 15_000_000,
      creditsPerSecond: 4_000,
      keysPerAccount: 5,
      failover: false,
      maxCallsInFlight: 64,
    }),
    team: planSchema({
      dailyCredits: 75_000_000,
      creditsPerSecond: 40_000,
      keysPerAccount: null,
      failover: false,
      maxCallsInFlight: 96,
    }),
    growth: planSchema({
      dailyCredits: 150_000_000,
      creditsPerSecond: 40_000,
      keysPerAccount: null,
      failover: true,
      maxCallsInFlight: 96,
    }),
    custom: planSchema({
      dailyCredits: null,
      creditsPerSecond: null,
      keysPerAccount: null,
      failover: true,
      maxCallsInFlight: 96,
    }),
  })
  .prefault({})
