import type { ApiKey } from './apiKey.ts'
import type { KeyAdmin } from './keyAdmin.ts'
import type { KeyStore } from './keyStore.ts'

const demoKeyMeta = 'demo_key'

/**
 * The embedded mode's demo key: made on the first start (on the team plan, so local testing is not
 * throttled at the free plan's 500 credits per second), the same one on every start after.
 */
export async function ensureDemoKey(store: KeyStore, admin: KeyAdmin): Promise<ApiKey> {
  const saved = await store.getMeta(demoKeyMeta)
  const existing = saved === undefined ? undefined : await store.getKey(saved)
  if (existing && existing.revokedAt === null) return existing
  const { key } = await admin.create({ name: 'demo', plan: 'team' })
  await store.setMeta(demoKeyMeta, key.key)
  return key
}
