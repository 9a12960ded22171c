import { hostname } from 'node:os'
import process from 'node:process'
import type { UsageDelta, UsageStore } from '../metering/usageStore.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'
import { createCarriedCounts } from './createCarriedCounts.ts'
import type { MinuteCounts, SharedDashboardFigures } from './createSharedDashboardFigures.ts'

const minuteMs = 60_000
/** Minutes kept: the overview's last hour. */
const keptMinutes = 60

type CacheStats = NonNullable<Network['cache']>['stats']

type MinuteBucket = {
  calls: Map<string, number>
  credits: Map<string, number>
  /** HTTP JSON-RPC answers by network (`(none)` when none was named or found) and status code. */
  statuses: Map<string, Map<number, number>>
  /** Cache hits and misses by network (counted only when the figures are shared). */
  hits: Map<string, number>
  misses: Map<string, number>
}

export type DashboardStats = ReturnType<typeof createDashboardStats>

export type DashboardStatsOptions = {
  now: () => number
  /** With many instances: the figures every instance counts into and reads (Redis). */
  shared?: { figures: SharedDashboardFigures; flushMs: number; onError: (err: unknown) => void } | undefined
}

/** Which instance answered an overview: its per-upstream state is its own. */
const instance = `${hostname()} pid ${process.pid}`

/**
 * The overview's live figures: calls and credits per network and minute for the last hour (taken
 * from the usage the meter writes), HTTP JSON-RPC answers by status and, read when asked, the
 * networks' heads, caches and upstreams. Alone, they are this process's (kept here); with `shared`,
 * this process's counts go to Redis every `flushMs` (with the cache's hits and misses) and the
 * overview reads every instance's from there. Heads and upstreams are always this instance's.
 * Everything is counted by network name: a network a reload rebuilt goes on where it was.
 */
export function createDashboardStats(options: DashboardStatsOptions) {
  const { now, shared } = options
  /** Alone: the last hour. Shared: what is not yet sent. */
  let minutes = new Map<number, MinuteBucket>()
  let currentMinute = Number.NaN
  let current = newBucket()
  // counted by network name, not by network: a network a reload rebuilt (its cache and upstreams
  // new, their counts at 0) goes on from what the one before had counted
  const cacheCounts = createCarriedCounts((stats: CacheStats) => [stats.hits, stats.misses])
  const upstreamCounts = createCarriedCounts((member: MemberView) => [member.requests, member.failures])
  /** The cache counts last sent, by network name. */
  const sentCache = new Map<string, readonly number[]>()
  let followed: () => readonly Network[] = () => []
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()

  function bucket(): MinuteBucket {
    const minute = Math.floor(now() / minuteMs)
    if (minute === currentMinute) return current
    let found = minutes.get(minute)
    if (!found) {
      found = newBucket()
      minutes.set(minute, found)
      for (const old of minutes.keys()) if (old <= minute - keptMinutes) minutes.delete(old)
    }
    currentMinute = minute
    current = found
    return found
  }

  /** Sends what was counted since the last send (kept for the next on failure, up to an hour). */
  async function send(): Promise<void> {
    if (!shared) return
    const bucketed = bucket()
    for (const network of followed()) {
      const stats = network.cache?.stats
      if (!stats) continue
      const [hits = 0, misses = 0] = cacheCounts(network.name, stats)
      const [sentHits = 0, sentMisses = 0] = sentCache.get(network.name) ?? []
      add(bucketed.hits, network.name, hits - sentHits)
      add(bucketed.misses, network.name, misses - sentMisses)
      sentCache.set(network.name, [hits, misses])
    }
    const sending = minutes
    minutes = new Map()
    currentMinute = Number.NaN
    try {
      await shared.figures.add(new Map([...sending].map(([minute, each]) => [minute, toCounts(each)])))
    } catch (err) {
      for (const [minute, each] of sending) {
        const into = minutes.get(minute)
        if (into) mergeInto(into, each)
        else minutes.set(minute, each)
      }
      throw err
    }
  }

  /**
   * The upstreams' views, their calls and failures carried by name: the network's, the role, and
   * the upstream's label (with its rank among the role's upstreams of the same label).
   */
  function upstreamViews(
    network: string,
    members: readonly MemberView[],
    role: 'primary' | 'partner',
    head: bigint | undefined,
  ) {
    const seen = new Map<string, number>()
    return members.map((member) => {
      const { label } = member.upstream
      const rank = (seen.get(label) ?? 0) + 1
      seen.set(label, rank)
      const counts = upstreamCounts(`${network}\n${role}\n${label}\n${rank}`, member)
      return toUpstreamView(member, role, head, counts)
    })
  }

  function flush(): Promise<void> {
    flushing = flushing.then(send, send)
    return flushing
  }

  return {
    /** Usage as the meter writes it (every flush): counted in the minute it arrives. */
    recordUsage(delta: UsageDelta): void {
      if (delta.hourly.length === 0) return
      const into = bucket()
      for (const row of delta.hourly) {
        add(into.calls, row.network, row.calls)
        add(into.credits, row.network, row.credits)
      }
    },

    /** One HTTP JSON-RPC answer's status, on the network the request named (or `(none)`). */
    noteAnswer(network: string, status: number): void {
      const { statuses } = bucket()
      let counts = statuses.get(network)
      if (!counts) {
        counts = new Map()
        statuses.set(network, counts)
      }
      counts.set(status, (counts.get(status) ?? 0) + 1)
    },

    /** Shared: sends this process's counts (and the networks' cache counts) every `flushMs` from now. */
    follow(networks: () => readonly Network[]): void {
      followed = networks
      if (!shared || timer) return
      timer = setInterval(() => {
        flush().catch(shared.onError)
      }, shared.flushMs)
      timer.unref()
    },

    /** Shared: sends what is left and lets go of Redis. */
    async close(): Promise<void> {
      clearInterval(timer)
      if (!shared) return
      await flush().catch(shared.onError)
      await shared.figures.close()
    },

    /** The last hour per minute (oldest first), and the state of every network and upstream now. */
    async snapshot(networks: readonly Network[]) {
      const nowMs = now()
      const latest = Math.floor(nowMs / minuteMs)
      const elapsedSeconds = Math.max(1, (nowMs - latest * minuteMs) / 1000)
      const series = Array.from({ length: keptMinutes }, (_, index) => latest - keptMinutes + 1 + index)
      // Redis unreachable: the figures are missing (said so), the instance's own state is still shown
      let hour = minutes
      let unavailable = false
      if (shared) {
        try {
          const read = await shared.figures.read(series)
          hour = new Map([...read].map(([minute, counts]) => [minute, toBucket(counts)]))
        } catch {
          hour = new Map()
          unavailable = true
        }
      }
      const statuses = new Map<number, number>()
      const byNetwork = new Map<string, Map<number, number>>()
      const hits = new Map<string, number>()
      const misses = new Map<string, number>()
      for (const [minute, bucketed] of hour) {
        if (minute <= latest - keptMinutes) continue
        for (const [network, counted] of bucketed.statuses) {
          const own = byNetwork.get(network) ?? new Map<number, number>()
          byNetwork.set(network, own)
          for (const [status, count] of counted) {
            add(statuses, status, count)
            add(own, status, count)
          }
        }
        for (const [network, count] of bucketed.hits) add(hits, network, count)
        for (const [network, count] of bucketed.misses) add(misses, network, count)
      }
      const toObject = (counts: Map<number, number> | undefined) =>
        Object.fromEntries([...(counts ?? [])].sort(([a], [b]) => a - b))
      return {
        /** Where the per-upstream state (and, alone, every figure) comes from. */
        instance,
        /** Calls, credits, answers and cache hits are every instance's (Redis). */
        shared: shared !== undefined,
        /** Shared, but Redis did not answer: the per-minute figures and answers are empty. */
        unavailable,
        minutes: series.map((minute) => minute * minuteMs),
        statuses: toObject(statuses),
        networks: networks.map((network) => {
          const head = network.head.latest()?.number
          const stats = network.cache?.stats
          // shared: the last hour's lookups of every instance; alone: this process's since it started
          const [ownHits = 0, ownMisses = 0] = stats && !shared ? cacheCounts(network.name, stats) : []
          const cacheHits = shared ? (hits.get(network.name) ?? 0) : ownHits
          const cacheMisses = shared ? (misses.get(network.name) ?? 0) : ownMisses
          const lookups = cacheHits + cacheMisses
          const seconds = (minute: number) => (minute === latest ? elapsedSeconds : 60)
          return {
            name: network.name,
            chainId: network.chainId,
            head: head === undefined ? null : Number(head),
            finalized: toNumber(network.head.finalized()),
            callsPerSecond: series.map(
              (minute) => (hour.get(minute)?.calls.get(network.name) ?? 0) / seconds(minute),
            ),
            creditsPerMinute: series.map((minute) => hour.get(minute)?.credits.get(network.name) ?? 0),
            statuses: toObject(byNetwork.get(network.name)),
            cache: stats
              ? {
                  hits: cacheHits,
                  misses: cacheMisses,
                  hitRatio: lookups === 0 ? null : cacheHits / lookups,
                  entries: stats.entries,
                }
              : null,
            upstreams: [
              ...upstreamViews(network.name, network.pool.members, 'primary', head),
              ...upstreamViews(network.name, network.partners?.members ?? [], 'partner', head),
            ],
          }
        }),
      }
    },
  }
}

/** The store, with `tap` told of each delta once it is stored. */
export function withUsageTap(store: UsageStore, tap: (delta: UsageDelta) => void): UsageStore {
  return {
    ...store,
    async addUsage(delta) {
      await store.addUsage(delta)
      tap(delta)
    },
    async addBatch(batchId, delta) {
      const added = await store.addBatch(batchId, delta)
      if (added) tap(delta)
      return added
    },
  }
}

function newBucket(): MinuteBucket {
  return { calls: new Map(), credits: new Map(), statuses: new Map(), hits: new Map(), misses: new Map() }
}

function add<T>(map: Map<T, number>, key: T, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value)
}

function mergeInto(into: MinuteBucket, from: MinuteBucket): void {
  for (const name of ['calls', 'credits', 'hits', 'misses'] as const)
    for (const [network, count] of from[name]) add(into[name], network, count)
  for (const [network, counted] of from.statuses) {
    const own = into.statuses.get(network) ?? new Map<number, number>()
    into.statuses.set(network, own)
    for (const [status, count] of counted) add(own, status, count)
  }
}

/** A bucket as Redis hash fields (network names are lowercase letters, digits and dashes, or `(none)`). */
function toCounts(bucketed: MinuteBucket): MinuteCounts {
  const counts: MinuteCounts = new Map()
  for (const name of ['calls', 'credits', 'hits', 'misses'] as const)
    for (const [network, count] of bucketed[name]) counts.set(`${name}:${network}`, count)
  for (const [network, counted] of bucketed.statuses)
    for (const [status, count] of counted) counts.set(`status:${network}:${status}`, count)
  return counts
}

function toBucket(counts: MinuteCounts): MinuteBucket {
  const bucketed = newBucket()
  for (const [field, count] of counts) {
    const [name, network, status] = field.split(':')
    if (network === undefined) continue
    if (name === 'status') {
      const own = bucketed.statuses.get(network) ?? new Map<number, number>()
      bucketed.statuses.set(network, own)
      add(own, Number(status), count)
    } else if (name === 'calls' || name === 'credits' || name === 'hits' || name === 'misses') {
      add(bucketed[name], network, count)
    }
  }
  return bucketed
}

/** An upstream's state now; its counts (calls, failures) are the caller's, carried by name. */
function toUpstreamView(
  member: MemberView,
  role: 'primary' | 'partner',
  networkHead: bigint | undefined,
  [requests = 0, failures = 0]: readonly number[],
) {
  const head = member.head
  return {
    name: member.upstream.label,
    role,
    head: toNumber(head),
    lagBlocks: head === undefined || networkHead === undefined ? null : Number(networkHead - head),
    latencyMs: member.latencyMs === undefined ? null : Math.round(member.latencyMs),
    errorRate: member.errorRate,
    breaker: member.breaker.state,
    requests,
    failures,
  }
}

function toNumber(value: bigint | number | undefined): number | null {
  return value === undefined ? null : Number(value)
}
