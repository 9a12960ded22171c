/**
 * Where a meter that shares its balances with other gateway instances gets its credits: a bank
 * (Redis) that hands out leases of the daily balances and slices of the per-second budgets, and to
 * which each instance reports, with absolute figures, what it has spent and what it still holds.
 */
export type CreditBank = {
  /**
   * One atomic exchange for one or two subjects (an account, and a key with its own limits): reports
   * what this instance spent and holds, then grants what it asks for. Rejects when the bank cannot
   * be reached; answers `needsSeed` when the day's state is absent and no seed was sent.
   */
  exchange(request: BankRequest): Promise<BankReply>
  close(): Promise<void>
  /**
   * The id this instance reports under (one per process, never reused): the usage it writes to the
   * ledger is kept under it too (UsageDelta.instance), so that a seed can tell each instance's share.
   */
  instanceId: string
  /** How long a lease outlives its holder's last exchange (then it goes back to the pool). */
  leaseTtlMs: number
  /**
   * Tells the other instances sharing the bank (best effort, at once: Redis pub/sub, the cluster
   * channel); a notice lost on the way costs a refusal its bound, never a credit.
   */
  notify(notice: LeaseNotice): void
  /** Listens to the other instances' notices (not this instance's own). */
  onNotice(listener: (notice: LeaseNotice) => void): void
}

/**
 * The end of a balance across instances: an instance that would refuse a call while others hold
 * unspent credits of the subject asks them to give those back (`recall`); each that had some
 * answers `returned` once the bank has them back.
 */
export type LeaseNotice = {
  kind: 'recall' | 'returned'
  /** The account whose exchange carries the subjects (`account:<id>`). */
  account: string
  /** The subjects (`account:<id>`, `key:<id>`) concerned. */
  subjects: string[]
  day: string
}

export type BankSubjectRequest = {
  /** `account:<id>` or `key:<id>`. */
  subject: string
  /** UTC day, `2026-11-22`. */
  day: string
  dailyLimit: number
  /** Credits this instance charged the subject today, all of them (absolute: resending is harmless). */
  usedCredits: number
  /** Credits leased (or borrowed) and not yet charged: held for admitted calls or still to spend. */
  heldCredits: number
  /** Of `heldCredits`, those not held for admitted calls: what a recall could take back. */
  freeCredits: number
  /**
   * The instance gives its free credits back because another asked (a recall): from now on the
   * bank grants the subject's day only the leases asked for (while its limit stays the same).
   */
  returning: boolean
  /**
   * Of `usedCredits`, what this instance has written to the usage store: what the day counts of it
   * when the bank has neither its last report nor its share of the seed (`seedInstances`; an older
   * version's bank forgets a report when it reaps the lease).
   */
  flushedCredits: number
  /** The day's usage from the store, sent when the bank asked for it (its state for the day was absent). */
  seedCredits: number | undefined
  /**
   * With `seedCredits`: each instance's share of it, as the store had it at the same moment
   * (UsageStore.loadDaySeeds). An instance's first report after the seed counts what it spent beyond
   * its share, wherever its writes to the store fell against the seed's read.
   */
  seedInstances: Record<string, number> | undefined
  /** More daily credits wanted, and the least that helps (0: none wanted). */
  leaseCredits: number
  leaseMinCredits: number
  /** The largest lease worth handing out (the bank shrinks it as the balance nears its end). */
  maxLeaseCredits: number
  /** Per-second budget (0: no per-second limit asked for). */
  creditsPerSecond: number
  /**
   * Per-second tokens wanted, the least that helps, and the slice worth taking at once. When the
   * bucket holds less than the least that helps but is full (a call dearer than a second's worth),
   * the least is granted and the bucket goes into debt by what it could not cover.
   */
  rateCredits: number
  rateMinCredits: number
  rateSliceCredits: number
  /** Per-second tokens given back (calls that cost less than they held), returned to the bucket first. */
  rateReturnedCredits: number
}

export type BankRequest = { subjects: BankSubjectRequest[] }

export type BankSubjectReply = {
  /** Daily credits granted now. */
  leasedCredits: number
  /** Credits of the subject's day handed out in leases or spent, by every instance, after this exchange. */
  grantedCredits: number
  /** Per-second tokens granted now. */
  rateGrantedCredits: number
  /**
   * When the per-second budget could not give `rateMinCredits`: how long until it can (in debt, the
   * time to pay it off first; for more than a second's worth, until the bucket is full).
   */
  rateWaitMs: number
  /**
   * Of `heldCredits`, what the bank counts as held: all of it, unless it had no record of them (Redis
   * lost its data, or the lease expired unreported) and they no longer fit under the limit.
   */
  heldCredits: number
  /**
   * Free credits the other live instances held at their last exchanges (plus the leases they were
   * granted then): what a recall might bring back. An upper bound, never less than they hold.
   */
  othersFreeCredits: number
}

export type BankReply = { needsSeed: false; subjects: BankSubjectReply[] } | { needsSeed: true }
