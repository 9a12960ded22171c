import { z } from 'zod'
import { accountsSchema } from './accountsSchema.ts'
import { devnetSchema } from './devnetSchema.ts'
import { networkSchema } from './networkSchema.ts'
import { plansSchema } from './plansSchema.ts'
import { serverSchema } from './serverSchema.ts'
import { tracingSchema } from './tracingSchema.ts'
import type { upstreamSchema } from './upstreamSchema.ts'

/**
 * The one config schema. Every default lives here or in the sub-schemas beside it (serverSchema,
 * networkSchema, upstreamSchema, devnetSchema, plansSchema, tracingSchema); types are inferred from it.
 */

/** The eth_getLogs limits of a network that sets none (docs/compatibility.md §7, as the hosted service). */
export const logsLimitDefaults = { maxLogsBlockRange: 10_000, maxLogsResults: 10_000 } as const

export const configSchema = z.strictObject({
  server: serverSchema,
  /** Where keys, accounts, usage and fee history live: one SQLite file, or PostgreSQL for many instances. */
  storage: z
    .union(
      [
        z.strictObject({ sqlite: z.string().min(1) }),
        z.strictObject({
          postgres: z.url({ protocol: /^postgres(ql)?$/, error: 'expected a postgres:// URL' }),
        }),
      ],
      { error: 'expected exactly one of sqlite (a file) or postgres (a postgres:// URL)' },
    )
    .default({ sqlite: './data/tollgate.db' }),
  /**
   * Shared state for many instances (credit balances, rate limits, the shared cache, signals); off
   * without it. The keys tollgate writes all start with keyPrefix.
   */
  redis: z
    .strictObject({
      url: z.url({ protocol: /^rediss?$/, error: 'expected a redis:// or rediss:// URL' }),
      keyPrefix: z.string().default('tollgate:'),
    })
    .optional(),
  upstreams: z
    .strictObject({
      timeoutMs: z.int().positive().default(30_000),
      connectionsPerUpstream: z.int().positive().default(128),
      /** A larger upstream answer is refused (the upstream counts as failed). */
      maxResponseBytes: z
        .int()
        .positive()
        .default(256 * 1024 * 1024),
      /**
       * How often upstreams without a live newHeads subscription (no `ws`, or it is down or silent),
       * and upstreams out of use, are asked for their head (health, lag, finality, the gas cap).
       */
      headPollMs: z.int().positive().default(1_000),
      /** Longest wait for one upstream when another could still be tried within timeoutMs. */
      attemptTimeoutMs: z.int().positive().default(5_000),
      /** Tries per idempotent call, the first included (others get one; a refused connection always moves on). */
      maxAttempts: z.int().min(1).max(10).default(3),
      /** An upstream further behind the network's head than this is not used for head-sensitive calls. */
      maxLagBlocks: z.int().min(0).default(2),
      /**
       * How often each upstream is probed for the earliest block and state it serves (pruned nodes),
       * at start and then every this many ms; calls pinned to older blocks go to upstreams that have
       * them; an upstream that refuses a block for want of it is probed at once. 0: only then.
       */
      historyProbeMs: z.int().min(0).default(60_000),
      breaker: z
        .strictObject({
          /** Consecutive failures that take an upstream out of use. */
          failures: z.int().positive().default(3),
          /** How long it stays out before one call (or the next head poll) probes it; doubles per failed probe. */
          cooldownMs: z.int().positive().default(1_000),
          maxCooldownMs: z.int().positive().default(30_000),
        })
        .prefault({}),
      /**
       * An idempotent call that an upstream has not answered after a delay (the quantile of that
       * upstream's recent latencies, within minDelayMs..maxDelayMs) is also sent to the next upstream;
       * the first answer wins, the other request is aborted.
       */
      hedge: z
        .strictObject({
          enabled: z.boolean().default(true),
          /** 0..1: which quantile of an upstream's recent latencies a call waits before hedging (0.9: p90). */
          quantile: z.number().min(0).max(1).default(0.9),
          minDelayMs: z.int().min(0).default(50),
          /** Also the delay while an upstream has no latencies yet. */
          maxDelayMs: z.int().positive().default(1_000),
          /** How many of an upstream's last successful calls the quantile is taken over. */
          samples: z.int().positive().max(10_000).default(64),
        })
        .refine((hedge) => hedge.minDelayMs <= hedge.maxDelayMs, {
          message: 'expected at most upstreams.hedge.maxDelayMs',
          path: ['minDelayMs'],
        })
        .prefault({}),
    })
    .prefault({}),
  failover: z
    .strictObject({
      /** Methods that may go to a network's partners (docs/compatibility.md §7); default: the method table's eligible ones. */
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
      /**
       * Immutable answers kept in Redis too, for every instance, and the highest block number shown
       * shared; only when `redis` is set (never for the embedded devnet: each instance has its own).
       */
      shared: z
        .strictObject({
          enabled: z.boolean().default(true),
          /** How long an answer stays in Redis; 0 is refused (it would keep answers forever). */
          ttlSeconds: z
            .int()
            .positive()
            .max(30 * 24 * 3600)
            .default(24 * 3600),
          /** Longest wait for a Redis lookup: a slower (or absent) Redis is a miss, and is not asked for 1 s. */
          waitMs: z.int().positive().max(10_000).default(50),
          /**
           * How long after Redis raised a chain's block number every instance shows it (all at one
           * moment, on Redis's clock): the time the announcement has to reach every instance, so
           * eth_blockNumber never goes backwards across instances.
           */
          headGraceMs: z.int().min(0).max(1_000).default(20),
          /** Redis memory for one chain's answers (the soonest-expiring go first when full). */
          maxBytes: z
            .int()
            .positive()
            .default(64 * 1024 * 1024),
        })
        .prefault({}),
    })
    .prefault({}),
  /** The embedded anvil devnet, started as network `devnet` (chain id 31337). On when the config has no `networks` key. */
  devnet: devnetSchema.optional(),
  networks: z.array(networkSchema).default([]),
  /**
   * The network the un-prefixed URLs serve (`/v3/KEY`, `/ws/v3/KEY`, and a Host header no network
   * claims); `false`: none. Unset: the embedded devnet when it runs, else the first of `networks`
   * (getDefaultNetwork). A reload never moves those URLs unless the new file names their network here.
   */
  defaultNetwork: z.union([z.string().min(1), z.literal(false)]).optional(),
  plans: plansSchema,
  websocket: z
    .strictObject({
      /** Live subscriptions one connection may hold. */
      maxSubscriptions: z.int().positive().default(100),
      /** Messages one connection may have unanswered; one more is answered -32005 at once, never queued. */
      maxInFlightRequests: z.int().positive().default(64),
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
      /** Removed (subscriptions follow the network's one head tracker): named, so a config that sets it is told the key to set. */
      headPollMs: z.never({ error: 'removed: set upstreams.headPollMs instead' }).optional(),
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
      /** Removed (the indexer follows the network's one head tracker): named, so a config that sets it is told the key to set. */
      pollMs: z.never({ error: 'removed: set upstreams.headPollMs instead' }).optional(),
    })
    .prefault({}),
  metering: z
    .strictObject({
      /** How often usage is written to the database; a crash loses at most this much usage. */
      flushMs: z.int().positive().default(1_000),
      /**
       * What a key's credits and limits do while Redis cannot be reached: open serves on, counting
       * locally from the last known balance (reconciled when Redis is back); closed refuses calls that
       * need a balance (503).
       */
      onRedisDown: z.enum(['open', 'closed']).default('open'),
      /**
       * How long an exchange with the shared balance (Redis; with --workers and no Redis, the primary
       * process) may take before the instance treats it as down and onRedisDown applies.
       */
      redisTimeoutMs: z.int().positive().default(1_000),
      /**
       * Where usage the database did not take at a stop is kept until the next start adds it (default:
       * `spool` beside the SQLite file, else `./data/spool`).
       */
      spoolDir: z.string().min(1).optional(),
    })
    .prefault({}),
  /** The request log key holders read (docs/accounts.md "Request log"): a sample of calls, every error and refusal. */
  requestLog: z
    .strictObject({
      /** Off: nothing is logged, nothing is kept per call. */
      enabled: z.boolean().default(true),
      /** The share of successful calls kept, 0 to 1; errors and refused calls are always kept. */
      sampleRate: z.number().min(0).max(1).default(0.01),
      /** Rows older than this many days are deleted. */
      days: z.int().min(1).max(366).default(7),
      /** The most rows kept per account; beyond it the oldest are deleted. */
      rowsPerAccount: z.int().min(1).max(10_000_000).default(100_000),
      /** Rows waiting to be written, at most; beyond it rows are dropped (and counted). */
      maxBufferedRows: z.int().min(1).max(1_000_000).default(10_000),
      /** How often waiting rows are written (and at most `maxBufferedRows / 2` wait for it). */
      flushMs: z.int().positive().default(1_000),
      /** Keep the client's whole address; by default an IPv4 address is cut to its /24, an IPv6 one to its /48. */
      fullClientAddress: z.boolean().default(false),
      /** Keep each call's params and answer (each cut to `maxParamsChars`); off by default. */
      params: z.boolean().default(false),
      /** The longest params or answer text kept when `params` is on. */
      maxParamsChars: z.int().min(16).max(65_536).default(1_024),
    })
    .prefault({}),
  alerts: z
    .strictObject({
      /** Deliver usage alerts (webhooks) from this instance; off: events are still recorded, delivered by others. */
      enabled: z.boolean().default(true),
      /** The wait after a delivery's first failed attempt; it doubles with each failure (with jitter). */
      retryBaseMs: z.int().positive().default(10_000),
      /** The longest wait between two attempts. */
      retryMaxMs: z.int().positive().default(3_600_000),
      /** How long after its event a delivery is tried; then it is given up. */
      retryForMs: z.int().positive().default(86_400_000),
      /** One attempt's deadline: connecting, the receiver's answer. */
      timeoutMs: z.int().positive().max(60_000).default(10_000),
      /** Deliveries in flight at once per process. */
      concurrency: z.int().positive().max(256).default(8),
      /** How often due deliveries are looked for. */
      pollMs: z.int().positive().default(1_000),
      /** Let webhooks reach loopback, private and link-local addresses (receivers inside your network). */
      privateAddresses: z.boolean().default(false),
      /** Days events and their delivery log are kept. */
      keepDays: z.int().positive().max(3650).default(30),
    })
    .prefault({}),
  auth: z
    .strictObject({
      /** Wrong secrets or JWTs a client address (or a key) may send at once before it gets 429 without a check. */
      failureBurst: z.int().positive().default(20),
      /** How fast that allowance comes back. */
      failuresPerMinute: z.int().positive().default(60),
      /** The longest a JWT may be valid (`exp - iat`, and `exp` from now); longer ones are refused (401). */
      maxJwtLifetimeSeconds: z.int().positive().max(86_400).default(86_400),
    })
    .prefault({}),
  admin: z
    .strictObject({
      /** Bearer token for the /admin API (or TOLLGATE_ADMIN_TOKEN); without one the admin API is off. */
      token: z.string().min(16, 'expected at least 16 characters').optional(),
    })
    .prefault({}),
  /** The account portal's sign-in through an identity provider (docs/admin.md#signing-in-with-an-identity-provider). */
  accounts: accountsSchema,
  metrics: z
    .strictObject({
      /** Serve GET /metrics (Prometheus text); off: /metrics is not found. */
      enabled: z.boolean().default(true),
      /** Bearer token a scrape must send; without one /metrics is open (keep it off public listeners). */
      token: z.string().min(16, 'expected at least 16 characters').optional(),
    })
    .prefault({}),
  tracing: tracingSchema,
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
