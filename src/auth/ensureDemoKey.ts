import type { ApiKey } from './apiKey.ts'
import type { KeyStore } from './keyStore.ts'

const demoKeyMeta = 'demo_key'

/** The embedded mode's demo key: made on the first start, the same one on every start after. */
export async function ensureDemoKey(store: KeyStore): Promise<ApiKey> {
  const saved = await store.getMeta(demoKeyMeta)
  const keys = await store.listKeys()
  const existing = keys.find((key) => key.key === saved && key.revokedAt === null)
  if (existing) return existing
  const created = await store.createKey({ name: 'demo' })
  await store.setMeta(demoKeyMeta, created.key)
  return created
}
