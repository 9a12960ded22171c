import type { Logger } from 'pino'
import type { PoolMember } from '../upstreams/PoolMember.ts'
import type { HeadEvent, Header } from './createHeadChain.ts'
import type { HeadReport } from './HeadReport.ts'

/** A network's share of a fleet's head polling (createFleetHeads: one lease and one report channel per network). */
export type HeadFleet = {
  /** This instance holds the network's lease: it polls the head and reports. */
  leads(): boolean
  /** Redis answers, and its reports reach this instance: it can follow. */
  connected(): boolean
  /** Tells the other instances (only the lease holder's reports are sent). */
  report(report: HeadReport): void
  /** The holder's reports, the latest kept one first; the returned function stops listening. */
  onReport(listener: (report: HeadReport) => void): () => void
  /** This network stops: it leaves the lease and the reports. */
  close(): void
}

/** Where a head tracker's heads come from: its own polls, or the fleet's lease holder. */
export type HeadSource = {
  /**
   * Whether this instance asks its upstreams for the head itself now: no fleet, the lease held, Redis
   * away, or the holder's last report vouched for none of this network's members.
   */
  polls(): boolean
  /**
   * While following, whether `member` is still polled here: out of use or degraded here (a poll is
   * what brings it back), or not in the holder's last report (it does not vouch for its head).
   */
  checks(member: PoolMember): boolean
  /**
   * The tracker's chain moved (`tip`: its newest block after `event`): the holder reports each block
   * it links, so that the others need not fetch the blocks between two polls, and a rewind (a fork
   * with no new branch) as its new tip going back.
   */
  heard(event: HeadEvent, tip: Header | undefined): void
  /** A round of polls ended: the holder reports what changed (members' heads, finalized). */
  polled(): void
  close(): void
}

export type HeadSourceOptions = {
  /** Undefined: no fleet (no Redis): this instance always polls. */
  fleet: HeadFleet | undefined
  members: readonly PoolMember[]
  /** The members' keys among the fleet (toMemberKeys), in the members' order. */
  memberKeys: readonly string[]
  /** The health checks' clock (a reported head is noted on the member as heard then). */
  now: () => number
  log: Logger
  /** The chain's newest block: reported before any block linked since (the block it started at). */
  tip(): Header | undefined
  /** What the tracker knows beside its heads, for a report. */
  known(): Pick<HeadReport, 'finalized' | 'genesis' | 'gasLimit'>
  /**
   * A report of the holder while this instance follows (its members' heads noted already): the
   * tracker takes its head and anchors.
   */
  follow(report: HeadReport): void
  /** This instance starts polling after it followed (it took the lease, or Redis went away). */
  onPolling(): void
}

/**
 * The layer between a head tracker and its fleet: it polls when it holds the network's lease (or
 * has no fleet, or Redis is away: no head is lost), and reports each block its chain links (a
 * rewind as its tip going back) and, after each round, its members' heads and the finalized block; otherwise it follows the holder's
 * reports, and polls only the members the holder does not vouch for. An instance whose upstreams
 * the holder does not reach at all (another node set, or the holder's are out of use) polls its own.
 */
export function createHeadSource(options: HeadSourceOptions): HeadSource {
  const { fleet, members, memberKeys } = options
  const keyOf = new Map(members.map((member, index) => [member, memberKeys[index] ?? String(index)]))
  let polling = true
  let last: { header: Header; goesBack: boolean } | undefined
  /** What the last report sent said (its header by hash): the same again is not sent. */
  let sent: string | undefined
  /** The members the holder's last report vouched for. */
  let vouched: ReadonlyMap<string, bigint> = new Map()

  /**
   * Whether the holder's last report vouched for one of this network's members: its reports are of
   * the same upstreams (one at least). Otherwise (before the first report, or the holder reaches none
   * of them) this instance polls its own, as without a fleet.
   */
  function sharesMembers(): boolean {
    for (const key of keyOf.values()) if (vouched.has(key)) return true
    return false
  }

  function polls(): boolean {
    const now = fleet === undefined || fleet.leads() || !fleet.connected() || !sharesMembers()
    if (now !== polling) {
      polling = now
      if (now) options.onPolling()
      else sent = undefined
      options.log.info(
        now
          ? 'this instance polls the head of the network (it holds the fleet lease, or Redis is away)'
          : "this instance follows the head of the network from the fleet lease holder's reports",
      )
    }
    return now
  }

  function report(): void {
    if (!fleet?.leads()) return
    const tip = options.tip()
    const base = last?.header === tip || !tip ? last : { header: tip, goesBack: false }
    if (!base) return
    const heads = new Map<string, bigint>()
    for (const member of members) {
      const key = keyOf.get(member)
      if (key !== undefined && member.isInUse() && member.head !== undefined) heads.set(key, member.head)
    }
    const made: HeadReport = { ...base, ...options.known(), members: heads }
    const text = `${made.header.hash} ${made.goesBack} ${made.finalized} ${made.genesis} ${made.gasLimit} ${[...heads].join(' ')}`
    if (text === sent) return
    sent = text
    fleet.report(made)
  }

  const stopListening = fleet?.onReport((heard) => {
    vouched = heard.members
    if (polls()) return
    // the holder's word on each member's head (its lag), not on its health here
    for (const [member, key] of keyOf) {
      const head = heard.members.get(key)
      if (head !== undefined) member.noteNotifiedHead(head, options.now())
    }
    options.follow(heard)
  })

  return {
    polls,
    checks(member) {
      const key = keyOf.get(member)
      return !member.isInUse() || member.isDegraded() || key === undefined || !vouched.has(key)
    },
    heard(event, tip) {
      if (event.kind === 'head') last = { header: event.header, goesBack: false }
      else if (event.kind === 'fork' && event.to < event.from && tip) last = { header: tip, goesBack: true }
      else return
      report()
    },
    polled: report,
    close() {
      stopListening?.()
      fleet?.close()
    },
  }
}
