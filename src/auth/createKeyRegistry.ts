import type { PlansConfig } from '../config/configSchema.ts'
import type { MeterSubject } from '../metering/meterTypes.ts'
import { accountSubject, keySubject } from '../metering/usageStore.ts'
import { type AccessPolicy, createAccessPolicy } from './accessPolicy.ts'
import type { ApiKey } from './apiKey.ts'
import type { KeyStore } from './keyStore.ts'

/** An active key as the request path needs it: limits resolved, security settings compiled. */
export type KeyEntry = {
  apiKey: ApiKey
  subject: MeterSubject
  /** The key's plan includes partner failover. */
  failoverAllowed: boolean
  access: AccessPolicy
}

/** What one reload changed, by key value. Keys created by it are in neither set. */
export type KeyChange = {
  /** Still active, with a new entry: settings, limits, account or plan changed. */
  changed: ReadonlySet<string>
  /** No longer active: revoked, or no longer usable (no plan numbers, settings that fail to load). */
  removed: ReadonlySet<string>
}

export type KeyRegistry = {
  /**
   * The active key with this value, from memory: the request path never waits on the database.
   * The same entry object comes back until that key changes, so holders can tell by identity.
   */
  findActiveKey(key: string): KeyEntry | undefined
  /** Every active key's meter subject, from memory (for /metrics: how near its balance each key is). */
  activeSubjects(): IterableIterator<MeterSubject>
  /** Reloads now if any key or account changed (also runs on a timer). */
  refresh(): Promise<void>
  /**
   * New plan numbers (a config reload): every key's entry is made again on them, and the keys whose
   * limits or failover changed are announced as changed. Settles once they are in place.
   */
  setPlans(plans: PlansConfig): Promise<void>
  /** Called after each reload that changed or removed keys, once the new entries are in place. */
  onChange(listener: (change: KeyChange) => void): () => void
  close(): void
}

export type KeyRegistryOptions = {
  refreshMs?: number
  /**
   * A cue that keys may have changed (the store's watchKeys: PostgreSQL notifications): each starts a
   * version check at once, so changes made by other processes take effect without waiting for the
   * interval, which stays as the fallback.
   */
  watch?: ((listener: () => void) => () => void) | undefined
  onError?: (err: unknown, keyId?: number) => void
}

/** A key's entry, the stored row it was made from, and the plans (by plansEpoch) it was made on. */
type Loaded = { entry: KeyEntry; fingerprint: string; epoch: number }

/**
 * Keeps every active key in memory and reloads them when the store's key version changes, so a key
 * created, changed or revoked by the CLI or the admin API (another process, maybe) takes effect
 * within `refreshMs`, or as soon as `watch` tells of it. An unchanged key keeps its entry; changed
 * and removed keys are announced.
 */
export async function createKeyRegistry(
  store: KeyStore,
  initialPlans: PlansConfig,
  options: KeyRegistryOptions = {},
): Promise<KeyRegistry> {
  let plans = initialPlans
  /** Counts plan changes: an entry made on other plan numbers is made again. */
  let plansEpoch = 0
  const { refreshMs = 1_000, onError } = options
  let active = new Map<string, Loaded>()
  let loadedVersion: string | undefined
  let running: Promise<void> | undefined
  /** A refresh asked for and not begun yet: later asks join it (it will see their changes too). */
  let queued: Promise<void> | undefined
  const listeners = new Set<(change: KeyChange) => void>()

  async function toEntry(apiKey: ApiKey, planTable: PlansConfig): Promise<KeyEntry | undefined> {
    const plan = planTable[apiKey.account.plan]
    const accountDailyCredits = plan?.dailyCredits ?? apiKey.account.dailyCredits
    const accountCreditsPerSecond = plan?.creditsPerSecond ?? apiKey.account.creditsPerSecond
    if (!plan || !accountDailyCredits || !accountCreditsPerSecond) {
      onError?.(
        new Error(`key ${apiKey.id} has no usable plan numbers (plan ${apiKey.account.plan}); refused`),
        apiKey.id,
      )
      return undefined
    }
    const { settings } = apiKey
    return {
      apiKey,
      subject: {
        accountId: apiKey.account.id,
        keyId: apiKey.id,
        accountCounter: accountSubject(apiKey.account.id),
        keyCounter: keySubject(apiKey.id),
        accountDailyCredits,
        accountCreditsPerSecond,
        keyDailyCredits: settings.dailyCredits > 0 ? settings.dailyCredits : undefined,
        keyCreditsPerSecond: settings.creditsPerSecond > 0 ? settings.creditsPerSecond : undefined,
      },
      failoverAllowed: plan.failover,
      access: await createAccessPolicy(settings),
    }
  }

  async function reload(): Promise<void> {
    // the plans as this reload began: a setPlans during it queues another reload, which redoes the keys
    const epoch = plansEpoch
    const onPlans = plans
    const version = await store.getKeysVersion()
    if (version === loadedVersion) return
    const keys = (await store.listKeys()).filter((key) => key.revokedAt === null)
    const next = new Map<string, Loaded>()
    const changed = new Set<string>()
    for (const key of keys) {
      // the stored row, account included, and the plans are all an entry is built from
      const fingerprint = JSON.stringify(key)
      const previous = active.get(key.key)
      const sameRow = previous?.fingerprint === fingerprint
      if (previous && sameRow && previous.epoch === epoch) {
        next.set(key.key, previous)
        continue
      }
      try {
        const entry = await toEntry(key, onPlans)
        if (!entry) continue
        // the same row on new plans with the same numbers for it: no change, the entry kept
        if (previous && sameRow && sameLimits(previous.entry, entry)) {
          next.set(key.key, { ...previous, epoch })
          continue
        }
        next.set(key.key, { entry, fingerprint, epoch })
        if (previous) changed.add(key.key)
      } catch (err) {
        onError?.(err, key.id)
      }
    }
    const removed = new Set<string>()
    for (const key of active.keys()) if (!next.has(key)) removed.add(key)
    active = next
    // plans that changed meanwhile leave the version unread: the reload setPlans queued does them
    if (epoch === plansEpoch) loadedVersion = version
    if (changed.size === 0 && removed.size === 0) return
    for (const listener of listeners) {
      try {
        listener({ changed, removed })
      } catch (err) {
        onError?.(err)
      }
    }
  }

  /** One reload at a time: a refresh asked for during one runs after it, so it sees the newest version. */
  function refresh(): Promise<void> {
    if (queued) return queued
    const run = (running ?? Promise.resolve()).then(() => {
      queued = undefined
      return reload()
    })
    queued = run
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    running = settled
    void settled.then(() => {
      if (running === settled) running = undefined
    })
    return run
  }

  await refresh()
  const timer = setInterval(() => {
    if (running === undefined) refresh().catch((err) => onError?.(err))
  }, refreshMs)
  timer.unref()
  const unwatch = options.watch?.(() => {
    refresh().catch((err) => onError?.(err))
  })

  return {
    findActiveKey: (key) => active.get(key)?.entry,
    *activeSubjects() {
      for (const { entry } of active.values()) yield entry.subject
    },
    refresh,
    setPlans(next) {
      plans = next
      plansEpoch++
      loadedVersion = undefined
      return refresh()
    },
    onChange(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    close() {
      clearInterval(timer)
      unwatch?.()
    },
  }
}

function sameLimits(before: KeyEntry, after: KeyEntry): boolean {
  const [a, b] = [before.subject, after.subject]
  return (
    before.failoverAllowed === after.failoverAllowed &&
    a.accountDailyCredits === b.accountDailyCredits &&
    a.accountCreditsPerSecond === b.accountCreditsPerSecond
  )
}
