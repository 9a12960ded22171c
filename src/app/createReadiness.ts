import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'

export type Readiness = { ok: boolean; body: unknown }

export type ReadinessDeps = {
  networks: NetworkRegistry
  /** Whether the database answers (Stores.ping). */
  pingDatabase(): Promise<boolean>
}

/**
 * GET /readyz: ready when the database answers and every network has a reachable upstream; the
 * body shows each upstream's and partner's health. One database ping at a time: a probe that finds
 * none out asks and waits for the answer; one that comes while a ping is out is shown the last
 * answer (unavailable until the first one), so a slow database holds up one probe, not all.
 */
export function createReadiness(deps: ReadinessDeps): () => Promise<Readiness> {
  let lastPing = false
  let pinging: Promise<void> | undefined
  const databaseAnswers = async (): Promise<boolean> => {
    if (pinging) return lastPing
    pinging = (async () => {
      try {
        lastPing = await deps.pingDatabase()
      } catch {
        lastPing = false
      }
    })()
    await pinging
    pinging = undefined
    return lastPing
  }

  return async () => {
    const database = (await databaseAnswers()) ? 'open' : 'unavailable'
    const status = deps.networks.all.map((network) => ({
      network: network.name,
      upstreams: network.pool.members.map(memberStatus),
      partners: network.partners?.members.map(memberStatus) ?? [],
      ready: network.pool.isReachable(),
    }))
    const ok = database === 'open' && status.every((network) => network.ready)
    return { ok, body: { status: ok ? 'ready' : 'not ready', database, networks: status } }
  }
}

function memberStatus(member: MemberView) {
  return {
    name: member.upstream.label,
    healthy: member.isInUse(),
    head: member.head === undefined ? null : Number(member.head),
    latencyMs: member.latencyMs === undefined ? null : Math.round(member.latencyMs * 100) / 100,
    errorRate: Math.round(member.errorRate * 1000) / 1000,
  }
}
