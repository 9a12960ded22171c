import type { UsageDelta, UsageStore } from '../metering/usageStore.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { PoolMember } from '../upstreams/createUpstreamPool.ts'

const minuteMs = 60_000
/** Minutes kept: the overview's last hour. */
const keptMinutes = 60

type MinuteBucket = {
  calls: Map<string, number>
  credits: Map<string, number>
  /** HTTP JSON-RPC answers by network (`(none)` when none was named or found) and status code. */
  statuses: Map<string, Map<number, number>>
}

export type DashboardStats = ReturnType<typeof createDashboardStats>

export type DashboardStatsOptions = { now: () => number }

/**
 * The overview's live figures of this process: calls and credits per network and minute for the
 * last hour (taken from the usage the meter writes), HTTP JSON-RPC answers by status, and, read
 * when asked, the networks' heads, caches and upstreams.
 */
export function createDashboardStats(options: DashboardStatsOptions) {
  const { now } = options
  const minutes = new Map<number, MinuteBucket>()

  function bucket(): MinuteBucket {
    const minute = Math.floor(now() / minuteMs)
    let found = minutes.get(minute)
    if (!found) {
      found = { calls: new Map(), credits: new Map(), statuses: new Map() }
      minutes.set(minute, found)
      for (const old of minutes.keys()) if (old <= minute - keptMinutes) minutes.delete(old)
    }
    return found
  }

  const add = <T>(map: Map<T, number>, key: T, value: number) => map.set(key, (map.get(key) ?? 0) + value)

  return {
    /** Usage as the meter writes it (every flush): counted in the minute it arrives. */
    recordUsage(delta: UsageDelta): void {
      if (delta.hourly.length === 0) return
      const current = bucket()
      for (const row of delta.hourly) {
        add(current.calls, row.network, row.calls)
        add(current.credits, row.network, row.credits)
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
      add(counts, status, 1)
    },

    /** The last hour per minute (oldest first), and the state of every network and upstream now. */
    snapshot(networks: readonly Network[]) {
      const nowMs = now()
      const current = Math.floor(nowMs / minuteMs)
      const elapsedSeconds = Math.max(1, (nowMs - current * minuteMs) / 1000)
      const series = Array.from({ length: keptMinutes }, (_, index) => current - keptMinutes + 1 + index)
      const statuses = new Map<number, number>()
      const byNetwork = new Map<string, Map<number, number>>()
      for (const [minute, bucketed] of minutes) {
        if (minute <= current - keptMinutes) continue
        for (const [network, counted] of bucketed.statuses) {
          const own = byNetwork.get(network) ?? new Map<number, number>()
          byNetwork.set(network, own)
          for (const [status, count] of counted) {
            add(statuses, status, count)
            add(own, status, count)
          }
        }
      }
      const toObject = (counts: Map<number, number> | undefined) =>
        Object.fromEntries([...(counts ?? [])].sort(([a], [b]) => a - b))
      return {
        minutes: series.map((minute) => minute * minuteMs),
        statuses: toObject(statuses),
        networks: networks.map((network) => {
          const head = network.pool.head()
          const stats = network.cache?.stats
          const lookups = stats ? stats.hits + stats.misses : 0
          const seconds = (minute: number) => (minute === current ? elapsedSeconds : 60)
          return {
            name: network.name,
            chainId: network.chainId,
            head: head === undefined ? null : Number(head),
            finalized: toNumber(network.heads.finalized()),
            callsPerSecond: series.map(
              (minute) => (minutes.get(minute)?.calls.get(network.name) ?? 0) / seconds(minute),
            ),
            creditsPerMinute: series.map((minute) => minutes.get(minute)?.credits.get(network.name) ?? 0),
            statuses: toObject(byNetwork.get(network.name)),
            cache: stats
              ? {
                  hits: stats.hits,
                  misses: stats.misses,
                  hitRatio: lookups === 0 ? null : stats.hits / lookups,
                  entries: stats.entries,
                }
              : null,
            upstreams: [
              ...network.pool.members.map((member) => toUpstreamView(member, 'primary', head)),
              ...(network.partners?.members ?? []).map((member) => toUpstreamView(member, 'partner', head)),
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
  }
}

function toUpstreamView(member: PoolMember, role: 'primary' | 'partner', networkHead: bigint | undefined) {
  const head = member.head
  return {
    name: member.upstream.label,
    role,
    head: toNumber(head),
    lagBlocks: head === undefined || networkHead === undefined ? null : Number(networkHead - head),
    latencyMs: member.latencyMs === undefined ? null : Math.round(member.latencyMs),
    errorRate: member.errorRate,
    breaker: member.breaker.state,
    requests: member.requests,
    failures: member.failures,
  }
}

function toNumber(value: bigint | number | undefined): number | null {
  return value === undefined ? null : Number(value)
}
