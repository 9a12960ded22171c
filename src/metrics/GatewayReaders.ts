/** What the rest of the gateway counts (metering, WebSockets, the gas indexer, storage), read at scrape time. */
export type GatewayReaders = {
  /** Calls the meter refused, by status. */
  refusals: Readonly<Record<'402' | '429', number>>
  /** Calls and credits written to the usage history, by network. */
  usage(): ReadonlyMap<string, Readonly<{ calls: number; credits: number }>>
  /** For every active key, the share (0 to 1) of its daily credits used today. */
  keysUsedShares(): Iterable<number>
  webSocketConnections(): number
  /** Client subscriptions by network and kind. */
  subscriptions(): Iterable<[network: string, counts: Readonly<Record<string, number>>]>
  /** The newest block in each network's fee-history window (undefined while it has none). */
  feeIndexedHeads(): Iterable<[network: string, head: number | undefined]>
  /** Whether the Redis connection of the credit bank is up; undefined without Redis. */
  redisUp: (() => boolean) | undefined
  database: 'postgres' | 'sqlite'
  /** Whether the database answers a ping (in time). */
  databaseUp(): Promise<boolean>
}
