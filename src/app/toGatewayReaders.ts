import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { FeeIndexer } from '../gas/createFeeIndexer.ts'
import type { UsageTotals } from '../metering/createUsageTotals.ts'
import type { Meter } from '../metering/meterTypes.ts'
import type { GatewayReaders } from '../metrics/GatewayReaders.ts'
import type { WebSockets } from '../server/createWebSockets.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'

export type GatewayReadersDeps = {
  meter: Meter
  keys: KeyRegistry
  usage: UsageTotals
  hubs: ReadonlyMap<string, SubscriptionHub>
  webSockets: Pick<WebSockets, 'connections'>
  indexers: ReadonlyMap<number, FeeIndexer>
  /** Whether the credit bank's Redis connection is up; undefined without Redis. */
  redisUp: (() => boolean) | undefined
  database: GatewayReaders['database']
  /** createDatabaseProbe's: one ping in flight, shared with /readyz, waited for at most half a second. */
  databaseUp(): Promise<boolean>
}

/** What /metrics reads of the areas beside the upstreams: each read at scrape time, none on the request path. */
export function toGatewayReaders(deps: GatewayReadersDeps): GatewayReaders {
  const { meter, keys } = deps
  return {
    refusals: meter.refusals,
    usage: () => deps.usage.byNetwork(),
    *keysUsedShares() {
      for (const subject of keys.activeSubjects()) yield meter.usedShare(subject)
    },
    webSocketConnections: () => deps.webSockets.connections(),
    *subscriptions() {
      for (const [network, hub] of deps.hubs) yield [network, hub.counts()]
    },
    *feeIndexedHeads() {
      for (const indexer of deps.indexers.values()) yield [indexer.network.name, indexer.window()?.head]
    },
    redisUp: deps.redisUp,
    database: deps.database,
    databaseUp: deps.databaseUp,
  }
}
