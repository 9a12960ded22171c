import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { Network } from '../networks/createNetwork.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'

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
  /** The networks now (a reload may change them). */
  networks: () => readonly Network[]
  /** Config reloads by result, and when the running config was loaded. */
  reloads?: () => { applied: number; invalid: number; loadedAtMs: number }
  /** Bytes the process holds now of large answers until sent, and of request bodies and messages. */
  inFlight: { answerBytes(): number; bodyBytes(): number }
}

type Labels<T extends string> = Partial<Record<T, string>>
type Sample<T extends string> = [labels: Labels<T>, value: number | bigint | undefined]

/**
 * Every metric tollgate exposes, in one place. Nothing here runs on the request path: each metric is
 * read at scrape time (a `collect()` callback) from plain numbers the gateway keeps anyway: the
 * cache's stats, the pool members' counts and health, the head tracker's heads. Labels are bounded:
 * networks and upstreams come from the config, upstream names are the redacted labels (never a URL's
 * credentials or path).
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry()
  const rpcAnswers: RpcAnswerCounts = { '2xx': 0, '4xx': 0, '5xx': 0 }
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

  /** A counter whose value is read from the gateway's own running total. */
  function total<T extends string>(name: string, help: string, labelNames: T[], read: () => Sample<T>[]) {
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset()
        for (const [labels, value] of read()) if (value !== undefined) this.inc(labels, Number(value))
      },
    })
  }

  /** A gauge read at scrape time; a series whose value is unknown (undefined) is left out. */
  function gauge<T extends string>(name: string, help: string, labelNames: T[], read: () => Sample<T>[]) {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset()
        for (const [labels, value] of read()) if (value !== undefined) this.set(labels, Number(value))
      },
    })
  }

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
    'tollgate_network_head',
    "The network's head: the highest block number among upstreams in use.",
    networkLabel,
    () => options.networks().map((network) => [{ network: network.name }, network.pool.head()]),
  )
  gauge('tollgate_network_finalized', "The network's finalized block number.", networkLabel, () =>
    options.networks().map((network) => [{ network: network.name }, network.heads.finalized()]),
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

  const merged = Registry.merge([registry, processRegistry()])
  return {
    contentType: merged.contentType,
    render: () => merged.metrics(),
    rpcAnswers,
  }
}

type CachedSeries = { labels: { network: string }; cache: NonNullable<Network['cache']> }

type UpstreamSeries = {
  labels: { network: string; upstream: string; role: 'primary' | 'partner' }
  member: MemberView
}

/**
 * One series per pool member, labelled once (members are fixed when a network is built). Two
 * upstreams with the same printable label (e.g. one vendor host behind two keys) get `#2`, `#3`...
 * so that their series stay apart.
 */
function toUpstreamSeries(networks: readonly Network[]): UpstreamSeries[] {
  return networks.flatMap((network) => {
    const series = (members: readonly MemberView[], role: 'primary' | 'partner') => {
      const seen = new Map<string, number>()
      return members.map((member): UpstreamSeries => {
        const count = (seen.get(member.upstream.label) ?? 0) + 1
        seen.set(member.upstream.label, count)
        const upstream = count === 1 ? member.upstream.label : `${member.upstream.label}#${count}`
        return { labels: { network: network.name, upstream, role }, member }
      })
    }
    return [...series(network.pool.members, 'primary'), ...series(network.partners?.members ?? [], 'partner')]
  })
}

let processMetrics: Registry | undefined

/**
 * How often the event loop's lag is sampled, ms. prom-client's default (10) wakes an idle gateway
 * 100 times a second: 0.6% of a core in a process doing nothing else, against 0.1% at 100 ms.
 */
const eventLoopSampleMs = 100

/**
 * prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC), on a registry of
 * their own: not the library's global one, and made once per process, since they describe the
 * process whatever number of apps run in it (tests start many).
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics, eventLoopMonitoringPrecision: eventLoopSampleMs })
  }
  return processMetrics
}
