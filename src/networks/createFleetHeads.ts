import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { createRedisLeases } from '../store/createRedisLeases.ts'
import { openRedis } from '../store/openRedis.ts'
import type { HeadFleet } from './createHeadSource.ts'
import { type HeadReport, parseHeadReport, toHeadReportText } from './HeadReport.ts'

export type FleetHeads = {
  /** One network's share (its lease and reports), by chain id and name: instances of one config meet there. */
  forNetwork(chainId: number, name: string): HeadFleet
  /** Lets go of every lease (the others take them at once) and disconnects. */
  close(): Promise<void>
}

export type FleetHeadsOptions = {
  url: string
  keyPrefix: string
  /** The head poll (upstreams.headPollMs): the lease is tried and renewed once per poll, and lasts two. */
  pollMs: number
  log?: Logger
}

/** The shortest lease: a pause of the event loop shorter than this never hands the polls over. */
const minLeaseMs = 1_000
/** How long the latest report stays for a newcomer after the holder's last. */
const latestTtlMs = 60_000
/** Longest wait for one command: a slower Redis is away (every instance then polls itself). */
const commandTimeoutMs = 1_000
/** The message a holder that stops sends: the others try the lease at once. */
const released = 'released'

type Channel = {
  channel: string
  latestKey: string
  listeners: Set<(report: HeadReport) => void>
}

/**
 * Head polls shared by the instances on one Redis (docs/operations.md "Running many instances"):
 * per network, the instance holding a lease (createRedisLeases: renewed once a poll, lasting two)
 * polls the head and publishes what it learned (HeadReport) on a channel, and keeps the latest under
 * a key for newcomers; the others follow it (createHeadSource). A holder that stops lets go at once
 * and says so on the channel, so that another takes over within a poll; one that dies leaves its
 * lease to expire. While Redis is away nobody holds a lease and every instance polls itself.
 */
export async function createFleetHeads(options: FleetHeadsOptions): Promise<FleetHeads> {
  const { keyPrefix, log } = options
  const redis = await openRedis(options.url, {
    commandTimeoutMs,
    name: 'tollgate-heads',
    onDown: (err) =>
      log?.warn({ err }, 'fleet heads: Redis unreachable; every instance polls the head itself'),
    onBack: () => log?.info('fleet heads: Redis is back'),
  })
  const { Redis: RedisClient } = await import('ioredis')
  // its SUBSCRIBE waits for a connection however long Redis is away (and is renewed on reconnection)
  const subscriber: Redis = new RedisClient(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: true,
    connectTimeout: 2_000,
    connectionName: 'tollgate-head-reports',
  })
  subscriber.on('error', () => undefined)
  const leases = createRedisLeases(redis, {
    keyPrefix: `${keyPrefix}lease:`,
    leaseMs: Math.max(2 * options.pollMs, minLeaseMs),
    checkMs: options.pollMs,
    onError: (err) => log?.debug({ err }, 'fleet heads: a lease could not be tried'),
  })
  const channels = new Map<string, Channel>()
  /** Leases being let go of (a network that stopped): close() waits for them before it disconnects. */
  const releasing = new Set<Promise<void>>()

  function deliver(channel: Channel, text: string): void {
    if (text === released) {
      leases.check()
      return
    }
    let report: HeadReport
    try {
      report = parseHeadReport(text)
    } catch (err) {
      log?.debug({ err }, 'fleet heads: a report that does not parse, ignored')
      return
    }
    for (const listener of channel.listeners) listener(report)
  }

  /** The latest report, for a newcomer and after a reconnection (reports missed meanwhile). */
  function readLatest(channel: Channel): void {
    if (redis.status !== 'ready') return
    redis.get(channel.latestKey).then(
      (text) => text !== null && deliver(channel, text),
      () => undefined,
    )
  }

  subscriber.on('message', (name: string, text: string) => {
    const channel = channels.get(name)
    if (channel) deliver(channel, text)
  })
  subscriber.on('ready', () => {
    for (const channel of channels.values()) readLatest(channel)
  })
  await subscriber.connect().catch(() => undefined)

  function forNetwork(chainId: number, name: string): HeadFleet {
    const id = `${chainId}:${encodeURIComponent(name)}`
    const channelName = `${keyPrefix}head-reports:${id}`
    let channel = channels.get(channelName)
    if (!channel) {
      channel = { channel: channelName, latestKey: `${channelName}:latest`, listeners: new Set() }
      channels.set(channelName, channel)
      subscriber.subscribe(channelName).catch(() => undefined)
    }
    const own = channel
    const lease = leases.lead(`head-polls:${id}`)
    const mine = new Set<(report: HeadReport) => void>()
    let closed = false
    return {
      leads: () => lease.held(),
      connected: () => redis.status === 'ready' && subscriber.status === 'ready',
      report(report) {
        if (closed || !lease.held() || redis.status !== 'ready') return
        const text = toHeadReportText(report)
        redis
          .multi()
          .set(own.latestKey, text, 'PX', latestTtlMs)
          .publish(own.channel, text)
          .exec()
          .catch(() => undefined)
      },
      onReport(listener) {
        own.listeners.add(listener)
        mine.add(listener)
        // the latest kept, after the caller has finished wiring itself
        readLatest(own)
        return () => {
          own.listeners.delete(listener)
          mine.delete(listener)
        }
      },
      close() {
        if (closed) return
        closed = true
        for (const listener of mine) own.listeners.delete(listener)
        const held = lease.held()
        const done = lease
          .release()
          .then(async () => {
            // the others try at once, rather than at their next try
            if (held && redis.status === 'ready') await redis.publish(own.channel, released)
          })
          .catch(() => undefined)
          .finally(() => releasing.delete(done))
        releasing.add(done)
      },
    }
  }

  return {
    forNetwork,
    async close() {
      // the networks have stopped (and let go of their leases) by now: the rest in case one did not
      await Promise.all(releasing)
      await leases.close()
      redis.disconnect()
      subscriber.disconnect()
    },
  }
}
