import process from 'node:process'
import { Gauge, Registry } from 'prom-client'
import type { Network } from '../networks/createNetwork.ts'
import { attemptBucketsMs, attemptOutcomes } from '../upstreams/AttemptDurations.ts'
import { createCountedHistogram } from './createCountedHistogram.ts'
import { createScrapedMetrics, type Sample } from './createScrapedMetrics.ts'
import type { GatewayReaders } from './GatewayReaders.ts'
import { getProcessRegistry } from './getProcessRegistry.ts'
import { type RequestDurations, requestBucketsMs } from './RequestDurations.ts'
import { toUpstreamSeries, type UpstreamSeries } from './toUpstreamSeries.ts'

/**
 * Plain counters of HTTP JSON-RPC answers by status class, bumped by the HTTP adapter with one
 * integer increment per answer and read here only at scrape time.
 */
export type RpcAnswerCounts = { '2xx': number; '4xx': number; '5xx': number }

export type Metrics = {
  /** The Content-Type of `render()`'s text. */
  contentType: string
  /** Every metric in the Prometheus text format, read from the gateway's own counters now. */
  render(): Promise<string>
  /** Given to the HTTP adapter to count answers in. */
  rpcAnswers: RpcAnswerCounts
}

export type MetricsOptions = {
  /** tollgate's version (package.json). */
  version: string
  /** The networks now (a reload may change them). */
  networks: () => readonly Network[]
  /** Config reloads by result, and when the running config was loaded. */
  reloads?: () => { applied: number; invalid: number; loadedAtMs: number }
  /** Bytes the process holds now of large answers until sent, and of request bodies and messages. */
  inFlight: { answerBytes(): number; bodyBytes(): number }
  /** What the rest of the gateway counts (metering, WebSockets, the gas indexer, storage), read at scrape time. */
  gateway: GatewayReaders
  /**
   * How long requests took, by network, as the HTTP and WebSocket adapters count them: made before
   * them (and so before the metrics, which read the WebSocket adapter's connections).
   */
  requestDurations: RequestDurations
}

/** The shares of their daily credits at which keys are counted (tollgate_keys_daily_credits_used). */
const usedShares = [0.5, 0.8, 0.9, 1]
/** The quantiles of upstream latency shown, from each upstream's window of recent successful calls. */
const latencyQuantiles = [0.5, 0.9, 0.99]

/**
 * Every metric tollgate exposes, in one place. Nothing here runs on the request path: each metric is
 * read at scrape time (a `collect()` callback) from plain numbers the gateway keeps anyway: the
 * cache's stats, the pool members' counts and health, the head tracker's heads, the meter's refusals
 * and balances, the usage flushed, the WebSocket and subscription counts, the fee window, the answers
 * and request durations the adapters count; only the database's health is asked for then (one ping). Labels are bounded: networks and upstreams come
 * from the config, upstream names are the redacted labels (never a URL's credentials or path), and
 * keys are counted, never named.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry()
  const rpcAnswers: RpcAnswerCounts = { '2xx': 0, '4xx': 0, '5xx': 0 }
  const { requestDurations } = options
  // labelled once per set of networks (a reload makes a new one)
  let seriesOf: readonly Network[] | undefined
  let series: { upstreams: UpstreamSeries[]; cached: CachedSeries[] } = { upstreams: [], cached: [] }
  const current = () => {
    const networks = options.networks()
    if (networks !== seriesOf) {
      seriesOf = networks
      series = {
        upstreams: toUpstreamSeries(networks),
        cached: networks.flatMap((network) => {
          const { cache } = network
          return cache ? [{ labels: { network: network.name }, cache }] : []
        }),
      }
    }
    return series
  }
  const { gateway } = options

  const { total, gauge } = createScrapedMetrics(registry)

  gauge(
    'tollgate_build_info',
    "The running build, always 1: tollgate's version and the Node.js version it runs on.",
    ['version', 'node'],
    () => [[{ version: options.version, node: process.version }, 1]],
  )
  gauge(
    'tollgate_answers_in_flight_bytes',
    'Bytes of large answers the process holds until they are sent (bounded by server.maxAnswerBytesInFlight).',
    [],
    () => [[{}, options.inFlight.answerBytes()]],
  )
  gauge(
    'tollgate_bodies_in_flight_bytes',
    'Bytes of large request bodies and WebSocket messages the process holds (bounded by server.maxBodyBytesInFlight).',
    [],
    () => [[{}, options.inFlight.bodyBytes()]],
  )

  const networkLabel = ['network' as const]
  total('tollgate_cache_hits_total', 'Answers served from the cache.', networkLabel, () =>
    current().cached.map(({ labels, cache }) => [labels, cache.stats.hits]),
  )
  total('tollgate_cache_misses_total', 'Cacheable calls not found in the cache.', networkLabel, () =>
    current().cached.map(({ labels, cache }) => [labels, cache.stats.misses]),
  )
  total(
    'tollgate_cache_coalesced_total',
    'Calls that joined an identical call in flight instead of asking an upstream.',
    networkLabel,
    () => current().cached.map(({ labels, cache }) => [labels, cache.stats.coalesced]),
  )
  total(
    'tollgate_cache_shared_hits_total',
    'Cacheable calls not in memory answered by the shared cache (Redis) instead of an upstream.',
    networkLabel,
    () => current().cached.map(({ labels, cache }) => [labels, cache.stats.sharedHits]),
  )
  total(
    'tollgate_cache_forgets_total',
    'Times every cached answer of the network was dropped because the chain changed under it (a block at or below finalized, here or on another instance sharing Redis, or a new chain under the same chain id).',
    networkLabel,
    () => current().cached.map(({ labels, cache }) => [labels, cache.stats.forgets]),
  )
  total(
    'tollgate_cache_evictions_total',
    'Cache entries evicted to stay within maxBytes.',
    networkLabel,
    () => current().cached.map(({ labels, cache }) => [labels, cache.stats.evictions]),
  )
  gauge('tollgate_cache_entries', 'Answers kept in the cache.', networkLabel, () =>
    current().cached.map(({ labels, cache }) => [labels, cache.stats.entries]),
  )
  gauge('tollgate_cache_bytes', 'Memory counted for the answers kept in the cache.', networkLabel, () =>
    current().cached.map(({ labels, cache }) => [labels, cache.stats.bytes]),
  )

  const upstreamLabels = ['network' as const, 'upstream' as const, 'role' as const]
  total(
    'tollgate_upstream_requests_total',
    'Calls sent to an upstream through its pool: requests and background work, retries included (head polls not).',
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.requests]),
  )
  total(
    'tollgate_upstream_failures_total',
    'Calls to an upstream that failed (timeout, connection error, HTTP error, not JSON).',
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.failures]),
  )
  total(
    'tollgate_upstream_hedges_total',
    'Hedges: idempotent calls an upstream had not answered in time, also sent to the next upstream.',
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.hedges]),
  )
  gauge(
    'tollgate_upstream_latency_ms',
    "Moving average of an upstream's successful calls' latency, in milliseconds.",
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.latencyMs]),
  )
  gauge(
    'tollgate_upstream_error_rate',
    "Moving average of an upstream's failures, 0 to 1.",
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.errorRate]),
  )
  gauge(
    'tollgate_upstream_up',
    '1 while an upstream is in use (its breaker closed), 0 while it is kept off.',
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.isInUse() ? 1 : 0]),
  )
  gauge('tollgate_upstream_head', "An upstream's last known block number.", upstreamLabels, () =>
    current().upstreams.map(({ labels, member }) => [labels, member.head]),
  )
  gauge(
    'tollgate_upstream_latency_quantile_ms',
    "Quantiles of an upstream's last successful calls' latency (the window its hedge delay is read from), in milliseconds.",
    [...upstreamLabels, 'quantile'],
    () =>
      current().upstreams.flatMap(({ labels, member }) =>
        latencyQuantiles.map(
          (q): Sample<string> => [{ ...labels, quantile: String(q) }, member.latencyQuantile(q)],
        ),
      ),
  )
  createCountedHistogram(registry, {
    name: 'tollgate_upstream_attempt_duration_seconds',
    help: 'How long attempts of calls on an upstream took, by outcome: ok (answered), error, timeout, cancelled (a hedge answered first, or the client went away). Retries and hedges are attempts of their own.',
    bounds: attemptBucketsMs.map((ms) => ms / 1000),
    read: () =>
      current().upstreams.flatMap(({ labels, member }) =>
        attemptOutcomes.map((outcome) => {
          const { cumulativeCounts, sumMs } = member.attemptDurations.read(outcome)
          return { labels: { ...labels, outcome }, cumulativeCounts, sum: sumMs / 1000 }
        }),
      ),
  })
  gauge(
    'tollgate_upstream_consecutive_failures',
    "Failures in a row of an upstream's calls: its breaker opens at upstreams.breaker.failures (3).",
    upstreamLabels,
    () => current().upstreams.map(({ labels, member }) => [labels, member.breaker.consecutiveFailures]),
  )
  gauge(
    'tollgate_upstream_breaker_cooldown_seconds',
    "How long an upstream's open breaker stays open before a probe: upstreams.breaker.cooldownMs (1 s), doubled by each failed probe up to maxCooldownMs (30 s); 0 while it is closed.",
    upstreamLabels,
    () =>
      current().upstreams.map(({ labels, member }) => {
        const { state, cooldownMs } = member.breaker
        return [labels, state === 'open' ? cooldownMs / 1000 : 0]
      }),
  )

  gauge(
    'tollgate_network_head',
    "The network's head: the newest block of the chain its head tracker follows.",
    networkLabel,
    () => options.networks().map((network) => [{ network: network.name }, network.head.latest()?.number]),
  )
  gauge('tollgate_network_finalized', "The network's finalized block number.", networkLabel, () =>
    options.networks().map((network) => [{ network: network.name }, network.head.finalized()]),
  )
  total(
    'tollgate_chain_forks_total',
    "Times the network's chain left blocks it had: a reorg or a rewind (`past_finality`: at or below the finalized block, or deeper than remembered).",
    ['network', 'past_finality'],
    () =>
      options.networks().flatMap((network) => {
        const { forks, pastFinality } = network.heads.stats
        return [
          [{ network: network.name, past_finality: 'false' }, forks - pastFinality],
          [{ network: network.name, past_finality: 'true' }, pastFinality],
        ]
      }),
  )
  total(
    'tollgate_chain_new_chains_total',
    "Times the network's upstreams turned out to serve another chain under the same chain id (a new genesis block).",
    networkLabel,
    () => options.networks().map((network) => [{ network: network.name }, network.heads.stats.newChains]),
  )

  total(
    'tollgate_http_rpc_responses_total',
    'HTTP JSON-RPC answers by status class (a batch is one answer).',
    ['status_class'],
    () => [
      [{ status_class: '2xx' }, rpcAnswers['2xx']],
      [{ status_class: '4xx' }, rpcAnswers['4xx']],
      [{ status_class: '5xx' }, rpcAnswers['5xx']],
    ],
  )

  createCountedHistogram(registry, {
    name: 'tollgate_request_duration_seconds',
    help: 'How long JSON-RPC requests took the gateway, by network and transport: an HTTP request from its arrival to its answer handed to the connection, a WebSocket message from its arrival to its answer sent (a batch is one request; refusals included).',
    bounds: requestBucketsMs.map((ms) => ms / 1000),
    read: () =>
      requestDurations.read().map(({ network, transport, cumulativeCounts, sumMs }) => ({
        labels: { network, transport },
        cumulativeCounts,
        sum: sumMs / 1000,
      })),
  })

  total(
    'tollgate_meter_refusals_total',
    "Calls the credit meter refused: 402 (the account's daily credits spent), 429 (the key's daily credits spent, or a per-second limit).",
    ['status'],
    () => [
      [{ status: '402' }, gateway.refusals['402']],
      [{ status: '429' }, gateway.refusals['429']],
    ],
  )
  total(
    'tollgate_credits_charged_total',
    'Credits charged, by network, counted as the usage is written to the database (every metering.flushMs).',
    networkLabel,
    () => [...gateway.usage()].map(([network, usage]) => [{ network }, usage.credits]),
  )
  total(
    'tollgate_calls_total',
    'Calls recorded in the usage history (HTTP, WebSocket and Gas API), by network, counted as the usage is written.',
    networkLabel,
    () => [...gateway.usage()].map(([network, usage]) => [{ network }, usage.calls]),
  )
  gauge(
    'tollgate_keys_daily_credits_used',
    "Active keys that have used at least this share of their daily credits today (the key's own limit or its account's, whichever is nearer its end), as this process last saw the balances.",
    ['at_least'],
    () => {
      const counts = usedShares.map(() => 0)
      for (const share of gateway.keysUsedShares())
        usedShares.forEach((threshold, i) => {
          if (share >= threshold) counts[i] = (counts[i] as number) + 1
        })
      return usedShares.map((threshold, i) => [{ at_least: String(threshold) }, counts[i]])
    },
  )
  gauge('tollgate_websocket_connections', 'WebSocket connections open now.', [], () => [
    [{}, gateway.webSocketConnections()],
  ])
  gauge(
    'tollgate_subscriptions',
    'Client subscriptions (eth_subscribe) open now, by network and kind.',
    ['network', 'kind'],
    () =>
      [...gateway.subscriptions()].flatMap(([network, counts]) =>
        Object.entries(counts).map(([kind, count]): Sample<string> => [{ network, kind }, count]),
      ),
  )
  gauge(
    'tollgate_gas_indexed_head',
    "The newest block in the network's fee-history window (the gas API's data): behind tollgate_network_head while the indexer catches up or stalls.",
    networkLabel,
    () => [...gateway.feeIndexedHeads()].map(([network, head]) => [{ network }, head]),
  )
  gauge(
    'tollgate_gas_window_loaded',
    "1 once the network's fee-history window has blocks, 0 while it has none (the Gas API answers 503): one series per network with gas.enabled, none without.",
    networkLabel,
    () => [...gateway.feeIndexedHeads()].map(([network, head]) => [{ network }, head === undefined ? 0 : 1]),
  )
  const { redisUp } = gateway
  if (redisUp) {
    gauge(
      'tollgate_redis_up',
      "1 while the credit bank's Redis connection is up, 0 while it is not.",
      [],
      () => [[{}, redisUp() ? 1 : 0]],
    )
  }
  new Gauge({
    name: 'tollgate_database_up',
    help: 'Whether the database (PostgreSQL or SQLite) answered a ping at this scrape: 1 or 0.',
    labelNames: ['database'],
    registers: [registry],
    async collect() {
      this.set({ database: gateway.database }, (await gateway.databaseUp()) ? 1 : 0)
    },
  })

  const { reloads } = options
  if (reloads) {
    total(
      'tollgate_config_reloads_total',
      'Config reloads (SIGHUP) by result: applied (restart-only keys kept, logged), invalid (the file refused whole).',
      ['result'],
      () => [
        [{ result: 'applied' }, reloads().applied],
        [{ result: 'invalid' }, reloads().invalid],
      ],
    )
    gauge(
      'tollgate_config_loaded_timestamp_seconds',
      'When the running config was loaded: at start, then at each applied reload (Unix time).',
      [],
      () => [[{}, reloads().loadedAtMs / 1000]],
    )
  }

  const merged = Registry.merge([registry, getProcessRegistry()])
  return {
    contentType: merged.contentType,
    render: () => merged.metrics(),
    rpcAnswers,
  }
}

type CachedSeries = { labels: { network: string }; cache: NonNullable<Network['cache']> }
