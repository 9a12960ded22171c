import type { ApiKey } from './apiKey.ts'
import type { KeyStore } from './keyStore.ts'

export type KeyRegistry = {
  /** The active key with this value, from memory: the request path never waits on the database. */
  findActiveKey(key: string): ApiKey | undefined
  /** Reloads now if any key changed (also runs on a timer). */
  refresh(): Promise<void>
  close(): void
}

export type KeyRegistryOptions = { refreshMs?: number; onError?: (err: unknown) => void }

/**
 * Keeps every active key in memory and reloads them when the store's key version changes, so a
 * key created or revoked by the CLI (another process) takes effect within `refreshMs`.
 */
export async function createKeyRegistry(
  store: KeyStore,
  options: KeyRegistryOptions = {},
): Promise<KeyRegistry> {
  const { refreshMs = 1_000, onError } = options
  let active = new Map<string, ApiKey>()
  let loadedVersion: string | undefined

  async function refresh(): Promise<void> {
    const version = await store.getKeysVersion()
    if (version === loadedVersion) return
    const keys = await store.listKeys()
    active = new Map(keys.filter((key) => key.revokedAt === null).map((key) => [key.key, key]))
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
