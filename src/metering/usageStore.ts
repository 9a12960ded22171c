/** Credits one subject (`account:<id>` or `key:<id>`) spent on one UTC day. */
export type DailyUsage = { subject: string; day: string; credits: number }

/** Calls and credits of one key, network and method in one UTC hour (`2026-11-22T13`). */
export type HourlyUsage = {
  keyId: number
  network: string
  method: string
  hour: string
  calls: number
  credits: number
  failoverCalls: number
}

export type UsageDelta = {
  daily: DailyUsage[]
  hourly: HourlyUsage[]
  /**
   * The bank instance that wrote it (CreditBank.instanceId), when its balances are shared: its daily
   * credits are also kept under its id, for a seed's per-instance shares (loadDaySeeds).
   */
  instance?: string | undefined
}

/** A subject's day in the ledger, as a credit bank is seeded with it. */
export type DaySeed = {
  credits: number
  /** Of `credits`, what each bank instance wrote (UsageDelta.instance): usage written without one is in no share. */
  instances: Record<string, number>
}

export type UsageRow = {
  day: string
  keyId: number
  network: string
  method: string
  calls: number
  credits: number
  failoverCalls: number
}

/** Where the ledger persists. SQLite now; a Postgres/Redis implementation fills the same interface. */
export type UsageStore = {
  /** Every subject's credits on `day`. */
  loadDailyUsage(day: string): Promise<Map<string, number>>
  /** These subjects' credits on `day` (a subject that spent nothing is absent). */
  loadSubjectsUsage(day: string, subjects: readonly string[]): Promise<Map<string, number>>
  /**
   * These subjects' credits on `day` and each bank instance's share of them, read at one moment (a
   * subject that spent nothing is absent).
   */
  loadDaySeeds(day: string, subjects: readonly string[]): Promise<Map<string, DaySeed>>
  /**
   * Adds the deltas, all or nothing. Then, once a day, the per-instance shares of days before
   * yesterday go (no seed reads them): on their own, after the commit; a failure there is tried
   * again with a later delta and never fails this one.
   */
  addUsage(delta: UsageDelta): Promise<void>
  /**
   * Adds one batch of usage once: its id is recorded in the same transaction, and a batch whose id
   * is recorded already adds nothing (false). A spool replayed twice counts once.
   */
  addBatch(batchId: string, delta: UsageDelta): Promise<boolean>
  /** This ledger's id (its database and schema), which names the spool files meant for it. */
  getLedgerId(): Promise<string>
  /** Usage per day, key, network and method from `fromDay` on, oldest first. */
  queryUsage(query: { keyId?: number; fromDay: string }): Promise<UsageRow[]>
  /** Usage per hour, key, network and method from `fromHour` (`2026-11-22T13`) on, oldest first. */
  queryHourlyUsage(query: { keyId?: number; fromHour: string }): Promise<HourlyUsage[]>
}

export const accountSubject = (accountId: number) => `account:${accountId}`
export const keySubject = (keyId: number) => `key:${keyId}`

/**
 * A seed's figures from the ledger's rows: each subject's day (`credits`) once per instance that has
 * a share of it (`instance`, `instanceCredits`), or once with none (loadDaySeeds' join).
 */
export function daySeedsOf(
  rows: readonly { subject: string; credits: number; instance: string | null; instanceCredits: number }[],
): Map<string, DaySeed> {
  const seeds = new Map<string, DaySeed>()
  for (const { subject, credits, instance, instanceCredits } of rows) {
    let seed = seeds.get(subject)
    if (seed === undefined) {
      seed = { credits, instances: {} }
      seeds.set(subject, seed)
    }
    if (instance !== null) seed.instances[instance] = instanceCredits
  }
  return seeds
}
