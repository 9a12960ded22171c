import { z } from 'zod'

/** The one config schema. Every default lives here; types are inferred from it. */

const upstreamSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
  ws: z.url({ protocol: /^wss?$/, error: 'expected a ws(s) URL' }).optional(),
  name: z.string().min(1).optional(),
})

const networkSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected lowercase letters, digits and dashes'),
  chainId: z.int().positive(),
  upstreams: z.array(upstreamSchema).min(1, 'expected at least one upstream'),
  partners: z.array(upstreamSchema).default([]),
  /** Host names that select this network, besides `<name>.` as the first label of the Host header. */
  hosts: z.array(z.string().min(1)).default([]),
})

const devnetSchema = z.strictObject({
  /** Seconds between blocks; 0 mines a block per transaction. */
  blockTimeSeconds: z.number().min(0).default(2),
  seed: z.boolean().default(true),
})

/** A plan's numbers (COMPAT.md §3). `null` daily/per-second numbers: set per account (custom). */
function planSchema(defaults: {
  dailyCredits: number | null
  creditsPerSecond: number | null
  keysPerAccount: number | null
  failover: boolean
}) {
  return z
    .strictObject({
      dailyCredits: z.int().positive().nullable().default(defaults.dailyCredits),
      creditsPerSecond: z.int().positive().nullable().default(defaults.creditsPerSecond),
      /** null: unlimited */
      keysPerAccount: z.int().positive().nullable().default(defaults.keysPerAccount),
      failover: z.boolean().default(defaults.failover),
    })
    .prefault({})
}

const plansSchema = z
  .strictObject({
    core: planSchema({ dailyCredits: 3_000_000, creditsPerSecond: 500, keysPerAccount: 1, failover: false }),
    developer: planSchema({
      dailyCredits: 15_000_000,
      creditsPerSecond: 4_000,
      keysPerAccount: 5,
      failover: false,
    }),
    team: planSchema({
      dailyCredits: 75_000_000,
      creditsPerSecond: 40_000,
      keysPerAccount: null,
      failover: false,
    }),
    growth: planSchema({
      dailyCredits: 150_000_000,
      creditsPerSecond: 40_000,
      keysPerAccount: null,
      failover: true,
    }),
    custom: planSchema({ dailyCredits: null, creditsPerSecond: null, keysPerAccount: null, failover: true }),
  })
  .prefault({})

export const configSchema = z.strictObject({
  server: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.int().min(0).max(65535).default(8545),
      maxBodyBytes: z
        .int()
        .positive()
        .default(5 * 1024 * 1024),
      maxBatchSize: z.int().positive().default(1000),
      keepAliveTimeoutMs: z.int().positive().default(65_000),
      /** How long a shutdown waits for in-flight requests before closing their connections. */
      shutdownGraceMs: z.int().min(0).default(10_000),
    })
    .prefault({}),
  storage: z.strictObject({ sqlite: z.string().min(1).default('./data/tollgate.db') }).prefault({}),
  upstreams: z
    .strictObject({
      timeoutMs: z.int().positive().default(30_000),
      connectionsPerUpstream: z.int().positive().default(128),
      /** A larger upstream answer is refused (the upstream counts as failed). */
      maxResponseBytes: z
        .int()
        .positive()
        .default(256 * 1024 * 1024),
      /** How often each upstream's head is polled (health, lag, finality, the gas cap's block gas limit). */
      headPollMs: z.int().positive().default(2_000),
      /** Longest wait for one upstream when another could still be tried within timeoutMs. */
      attemptTimeoutMs: z.int().positive().default(5_000),
      /** Tries per idempotent call, the first included (others get one; a refused connection always moves on). */
      maxAttempts: z.int().min(1).max(10).default(3),
      /** An upstream further behind the network's head than this is not used for head-sensitive calls. */
      maxLagBlocks: z.int().min(0).default(2),
      breaker: z
        .strictObject({
          /** Consecutive failures that take an upstream out of use. */
          failures: z.int().positive().default(3),
          /** How long it stays out before one call (or the next head poll) probes it; doubles per failed probe. */
          cooldownMs: z.int().positive().default(1_000),
          maxCooldownMs: z.int().positive().default(30_000),
        })
        .prefault({}),
    })
    .prefault({}),
  failover: z
    .strictObject({
      /** Methods that may go to a network's partners (COMPAT.md §7); default: the method table's eligible ones. */
      methods: z.array(z.string().min(1)).optional(),
    })
    .prefault({}),
  cache: z
    .strictObject({
      /** Finality-aware answer cache (immutable answers, and head answers until the next block). */
      enabled: z.boolean().default(true),
      /** Memory for kept answers, per network. */
      maxBytes: z
        .int()
        .positive()
        .default(128 * 1024 * 1024),
      /** Answers larger than this are not kept. */
      maxEntryBytes: z
        .int()
        .positive()
        .default(8 * 1024 * 1024),
    })
    .prefault({}),
  /** The embedded anvil devnet, started as network `devnet` (chain id 31337). On when no networks are configured. */
  devnet: devnetSchema.optional(),
  networks: z.array(networkSchema).default([]),
  plans: plansSchema,
  websocket: z
    .strictObject({
      /** Live subscriptions one connection may hold. */
      maxSubscriptions: z.int().positive().default(100),
      /** Bytes queued for a client that reads too slowly before it is closed (1008). */
      maxBufferedBytes: z
        .int()
        .positive()
        .default(16 * 1024 * 1024),
      /** Largest frame a client may send (larger: closed with 1009). */
      maxFrameBytes: z
        .int()
        .positive()
        .default(5 * 1024 * 1024),
      /** Keepalive: a ping this often; a client that has not answered the last one is dropped. */
      pingMs: z.int().positive().default(30_000),
      /** Head polling interval for networks whose upstreams have no WebSocket. */
      headPollMs: z.int().positive().default(1_000),
    })
    .prefault({}),
  gas: z
    .strictObject({
      /** Index fee history and serve the Gas REST API for every network. */
      enabled: z.boolean().default(true),
      /** Blocks of history kept per network (the percentile endpoints' window). */
      windowBlocks: z.int().positive().default(20_000),
      /** Blocks that baseFeeHistory answers with. */
      historyBlocks: z.int().positive().default(500),
      /** Blocks per eth_feeHistory call while backfilling (nodes allow at most 1024). */
      chunkBlocks: z.int().min(1).max(1024).default(1024),
      pollMs: z.int().positive().default(2_000),
    })
    .prefault({}),
  metering: z
    .strictObject({
      /** How often usage is written to the database; a crash loses at most this much usage. */
      flushMs: z.int().positive().default(1_000),
    })
    .prefault({}),
  admin: z
    .strictObject({
      /** Bearer token for the /admin API (or TOLLGATE_ADMIN_TOKEN); without one the admin API is off. */
      token: z.string().min(16, 'expected at least 16 characters').optional(),
    })
    .prefault({}),
  metrics: z
    .strictObject({
      /** Serve GET /metrics (Prometheus text); off: /metrics is not found. */
      enabled: z.boolean().default(true),
      /** Bearer token a scrape must send; without one /metrics is open (keep it off public listeners). */
      token: z.string().min(16, 'expected at least 16 characters').optional(),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
})

export type Config = z.infer<typeof configSchema>
export type NetworkConfig = z.infer<typeof networkSchema>
export type UpstreamConfig = z.infer<typeof upstreamSchema>
export type DevnetConfig = z.infer<typeof devnetSchema>
export type PlansConfig = z.infer<typeof plansSchema>
export type PlanName = keyof PlansConfig
export type Plan = PlansConfig[PlanName]
