import type { ApiKey } from '../auth/apiKey.ts'
import { utcDay } from '../metering/clock.ts'
import type { UsageStore } from '../metering/usageStore.ts'

/** One row of an account's usage: a day, one of its keys (by name and value), a network and a method. */
export type AccountUsageRow = {
  day: string
  key: string
  keyName: string
  network: string
  method: string
  calls: number
  credits: number
  failoverCalls: number
}

/**
 * The usage of `keys` (one account's, revoked ones included: what they spent stays the account's)
 * over the last `days` UTC days, today included: read key by key, so no other account's row is
 * ever read. Oldest day first; within a day, in the keys' order.
 */
export async function getAccountUsage(
  usage: UsageStore,
  keys: readonly ApiKey[],
  range: { days: number; nowMs: number },
): Promise<AccountUsageRow[]> {
  const fromDay = utcDay(range.nowMs - (range.days - 1) * 86_400_000)
  const perKey = await Promise.all(
    keys.map(async (key) =>
      (await usage.queryUsage({ keyId: key.id, fromDay })).map(({ keyId: _, ...row }) => ({
        ...row,
        key: key.key,
        keyName: key.name,
      })),
    ),
  )
  const rows = perKey.flat()
  // a stable sort: within a day the keys keep their order
  return rows.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
}
