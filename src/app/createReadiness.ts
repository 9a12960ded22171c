import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'

export type Readiness = { ok: boolean; body: unknown }

export type ReadinessDeps = {
  networks: NetworkRegistry
  /** Whether the database answers: createDatabaseProbe's, one ping at a time shared with /metrics. */
  databaseUp(): Promise<boolean>
  /** Whether the shared credit bank answers (Meter.bankUp); undefined without one. */
  bankUp?: () => boolean | undefined
  /** metering.onRedisDown: only `closed` refuses calls while the bank is away, so only then is it a reason. */
  onBankDown?: 'open' | 'closed'
  /** The gateway is stopping: a probe on a kept-alive connection is told so. */
  draining?: () => boolean
}

/**
 * GET /readyz: ready when the database answers, every network has a reachable upstream and a known
 * head, the gateway is not draining and (with `metering.onRedisDown: closed`) the credit bank
 * answers; `reasons` names each thing that is not so. The body shows each upstream's and partner's
 * health. The database's answer is createDatabaseProbe's: a probe waits at most half a second for
 * it, and shares one ping in flight with the other probes and the scrapes of /metrics.
 */
export function createReadiness(deps: ReadinessDeps): () => Promise<Readiness> {
  return async () => {
    const database = (await deps.databaseUp()) ? 'open' : 'unavailable'
    const reasons: string[] = []
    if (database !== 'open') reasons.push('database unavailable')
    const bankUp = deps.bankUp?.()
    if (bankUp === false && deps.onBankDown === 'closed') reasons.push('credit bank unreachable')
    if (deps.draining?.()) reasons.push('draining')
    const status = deps.networks.all.map((network) => {
      const reachable = network.pool.isReachable()
      const head = network.head.latest()
      if (!reachable) reasons.push(`network ${network.name}: no upstream healthy`)
      else if (head === undefined) reasons.push(`network ${network.name}: head unknown`)
      return {
        network: network.name,
        upstreams: network.pool.members.map(memberStatus),
        partners: network.partners?.members.map(memberStatus) ?? [],
        ready: reachable && head !== undefined,
      }
    })
    const ok = reasons.length === 0
    const bank = bankUp === undefined ? {} : { creditBank: bankUp ? 'up' : 'away' }
    return {
      ok,
      body: { status: ok ? 'ready' : 'not ready', reasons, database, ...bank, networks: status },
    }
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
