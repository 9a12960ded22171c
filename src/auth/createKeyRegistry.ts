import type { PlansConfig } from '../config/configSchema.ts'
import type { MeterSubject } from '../metering/createMeter.ts'
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

export type KeyRegistry = {
  /** The active key with this value, from memory: the request path never waits on the database. */
  findActiveKey(key: string): KeyEntry | undefined
  /** Reloads now if any key or account changed (also runs on a timer). */
  refresh(): Promise<void>
  close(): void
}

export type KeyRegistryOptions = { refreshMs?: number; onError?: (err: unknown, keyId?: number) => void }

/**
 * Keeps every active key in memory and reloads them when the store's key version changes, so a key
 * created, changed or revoked by the CLI or the admin API (another process, maybe) takes effect
 * within `refreshMs`.
 */
export async function createKeyRegistry(
  store: KeyStore,
  plans: PlansConfig,
  options: KeyRegistryOptions = {},
): Promise<KeyRegistry> {
  const { refreshMs = 1_000, onError } = options
  let active = new Map<string, KeyEntry>()
  let loadedVersion: string | undefined

  async function toEntry(apiKey: ApiKey): Promise<KeyEntry | undefined> {
    const plan = plans[apiKey.account.plan]
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

  async function refresh(): Promise<void> {
    const version = await store.getKeysVersion()
    if (version === loadedVersion) return
    const keys = (await store.listKeys()).filter((key) => key.revokedAt === null)
    const next = new Map<string, KeyEntry>()
    for (const key of keys) {
      try {
        const entry = await toEntry(key)
        if (entry) next.set(key.key, entry)
      } catch (err) {
        onError?.(err, key.id)
      }
    }
    active = next
    loadedVersion = version
  }

  await refresh()
  const timer = setInterval(() => refresh().catch((err) => onError?.(err)), refreshMs)
  timer.unref()

  return {
    findActiveKey: (key) => active.get(key),
    refresh,
    close: () => clearInterval(timer),
  }
}
