import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'

export type Readiness = { ok: boolean; body: unknown }

export type ReadinessDeps = {
  networks: NetworkRegistry
  /** Whether the database answers (Stores.ping). */
  pingDatabase(): boolean | Promise<boolean>
}

/**
 * GET /readyz: ready when the database answers and every network has a reachable upstream; the
 * body shows each upstream's and partner's health. A database that answers asynchronously is shown
 * as its last completed ping, at once or not (one ping at a time; unavailable until the first one
 * answers).
 */
export function createReadiness(deps: ReadinessDeps): () => Readiness {
  let lastPing = false
  let pinging: Promise<unknown> | undefined
  const databaseAnswers = (): boolean => {
    if (pinging) return lastPing
    let answer: boolean | Promise<boolean>
    try {
      answer = deps.pingDatabase()
    } catch {
      return false
    }
    if (typeof answer === 'boolean') {
      lastPing = answer
      return answer
    }
    pinging = answer
      .then(
        (up) => {
          lastPing = up
        },
        () => {
          lastPing = false
        },
      )
      .finally(() => {
        pinging = undefined
      })
    return lastPing
  }

  return () => {
    const database = databaseAnswers() ? 'open' : 'unavailable'
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
