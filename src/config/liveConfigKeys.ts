/**
 * What a reload does with a live key's new value:
 * - `networks`: each network compared, added, removed or rebuilt; the un-prefixed URLs' network set;
 * - `every network`: every network rebuilt on it;
 * - `plans`: the keys of the plans made again on them, and the request path's settings (a plan's
 *   maxCallsInFlight) swapped in;
 * - `settings`: the request path's settings built again and swapped in (a request, or a WebSocket
 *   connection, reads the ones in place as it starts);
 * - `auth`: the same, with a new authentication limiter and JWT verifier;
 * - `log`: the log level.
 */
export type LiveKeyEffect = 'networks' | 'every network' | 'plans' | 'settings' | 'auth' | 'log'

/** One row of docs/config.md "What a reload changes": keys, what a reload does with them, and when they apply. */
export type LiveKeyRow = { keys: readonly string[]; effect: LiveKeyEffect; applies: string }

/**
 * The config keys a reload (SIGHUP) applies to a running gateway, each with what is under it.
 * Everything else (the listener, storage, Redis, workers, the devnet, the shared cache, metering,
 * gas indexing, the admin token, ...) is read once at start: a change to it needs a restart.
 * docs/config.md "What a reload changes" is this table, row by row (liveConfigKeys.test.ts holds them equal).
 * @internal exported for its tests; the gateway reads it through getLiveKeyEffect
 */
export const liveConfigKeys: readonly LiveKeyRow[] = [
  {
    keys: ['networks'],
    effect: 'networks',
    applies:
      "each network compared: added, removed, or rebuilt when its entry changed; an unchanged one keeps its upstreams' state and its open WebSocket connections",
  },
  {
    keys: ['defaultNetwork'],
    effect: 'networks',
    applies:
      'the next request; a file that would move the un-prefixed URLs to another network without naming it here is refused ([below](#choosing-the-network-of-a-request))',
  },
  { keys: ['upstreams'], effect: 'every network', applies: 'every network rebuilt on the new settings' },
  { keys: ['failover'], effect: 'every network', applies: 'every network rebuilt' },
  {
    keys: ['cache.enabled', 'cache.maxBytes', 'cache.maxEntryBytes'],
    effect: 'every network',
    applies: 'every network rebuilt (its memory cache starts empty)',
  },
  {
    keys: ['plans'],
    effect: 'plans',
    applies:
      'every key of a plan whose numbers changed; `maxCallsInFlight` from the next request (over WebSocket, the next connection)',
  },
  {
    keys: ['server.maxBatchSize', 'server.maxJsonDepth'],
    effect: 'settings',
    applies: 'the next request (over WebSocket, the next connection)',
  },
  {
    keys: ['auth'],
    effect: 'auth',
    applies:
      'the next request (over WebSocket, the next connection); the count of failed attempts starts again',
  },
  {
    keys: ['websocket.maxSubscriptions', 'websocket.maxInFlightRequests', 'websocket.maxBufferedBytes'],
    effect: 'settings',
    applies: 'the next connection',
  },
  { keys: ['gas.historyBlocks'], effect: 'settings', applies: 'the next Gas API call' },
  { keys: ['metrics.token'], effect: 'settings', applies: 'the next scrape' },
  { keys: ['log.level'], effect: 'log', applies: 'at once' },
]

/** What a reload does with a change at `name` (`plans.core.dailyCredits`), undefined when it needs a restart. */
export function getLiveKeyEffect(name: string): LiveKeyEffect | undefined {
  for (const row of liveConfigKeys)
    if (row.keys.some((key) => name === key || name.startsWith(`${key}.`))) return row.effect
  return undefined
}
