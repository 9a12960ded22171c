import type { Network } from '../networks/createNetwork.ts'
import type { MemberView } from '../upstreams/PoolMember.ts'

export type UpstreamSeries = {
  labels: { network: string; upstream: string; role: 'primary' | 'partner' }
  member: MemberView
}

/**
 * One series per pool member, labelled once (members are fixed when a network is built). Two
 * upstreams with the same printable label (e.g. one vendor host behind two keys) get `#2`, `#3`...
 * so that their series stay apart.
 */
export function toUpstreamSeries(networks: readonly Network[]): UpstreamSeries[] {
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
