import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { openRedis } from '../store/openRedis.ts'
import type { BankReply, BankRequest, BankSubjectRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import { creditScript } from './creditScript.ts'
import { isLeaseNotice } from './isLeaseNotice.ts'

export type RedisBankOptions = {
  url: string
  /** Every key the bank writes starts with it (`tollgate:` by default). */
  keyPrefix: string
  /**
   * How long a lease outlives its last exchange: an instance that stops (SIGKILL, lost network)
   * gives its held credits back to the pool this long after it last spoke to Redis.
   */
  leaseTtlMs?: number
  /** Longest wait for one exchange; a slower Redis counts as down. */
  commandTimeoutMs?: number
  /** The first Redis error of an outage (connection lost, refused); the bank reconnects by itself. */
  onError?: (err: unknown) => void
}

type ScriptRedis = Redis & {
  tollgateCredits(keyCount: number, ...keysAndArgument: string[]): Promise<string>
}

/** The script's one argument (creditScript.ts), sent as JSON: the requests under their own field names. */
type ScriptArguments = { instance: string; leaseTtlMs: number; subjects: BankSubjectRequest[] }

/**
 * The credit bank on Redis: one atomic Lua script per exchange (creditScript.ts). Connects before it
 * answers (or not, if Redis is down: it goes on trying). Commands fail at
 * once while Redis is unreachable (no offline queue), so a meter can fall back to its
 * `onRedisDown` mode instead of waiting; ioredis keeps reconnecting in the background. Notices
 * between instances (lease recalls at the end of a balance) go over pub/sub on
 * `<keyPrefix>credits:notices`, on a second connection.
 */
export async function createRedisBank({
  url,
  keyPrefix,
  leaseTtlMs = 15_000,
  commandTimeoutMs = 1_000,
  onError,
}: RedisBankOptions): Promise<CreditBank & { instanceId: string; isConnected(): boolean }> {
  const instanceId = randomUUID()
  // a Redis down at start is a Redis down: the meter's onRedisDown mode applies until it is back
  // (both connections tried at once: one connect timeout, not two)
  const [commands, subscriber] = await Promise.all([
    openRedis(url, { commandTimeoutMs, name: 'tollgate-credits', autoPipelining: true, onDown: onError }),
    openRedis(url, { commandTimeoutMs, name: 'tollgate-credit-notices' }),
  ])
  const redis = commands as ScriptRedis
  redis.defineCommand('tollgateCredits', { lua: creditScript })
  const channel = `${keyPrefix}credits:notices`
  const listeners: ((notice: LeaseNotice) => void)[] = []
  // subscribed again after every reconnection (ioredis would only renew a subscription that succeeded)
  const subscribe = () => subscriber.subscribe(channel).catch(() => undefined)
  subscriber.on('ready', () => void subscribe())
  if (subscriber.status === 'ready') await subscribe()
  subscriber.on('message', (from: string, text: string) => {
    if (from !== channel) return
    let notice: unknown
    try {
      notice = JSON.parse(text)
    } catch {
      return
    }
    // anything but a notice (another version, a stray PUBLISH) is ignored
    if (!isLeaseNotice(notice) || (notice as { from?: unknown }).from === instanceId) return
    const { kind, account, subjects, day } = notice
    for (const listener of listeners) listener({ kind, account, subjects, day })
  })

  async function exchange({ subjects }: BankRequest): Promise<BankReply> {
    const keys: string[] = []
    for (const each of subjects) {
      keys.push(`${keyPrefix}credits:${each.subject}:${each.day}`, `${keyPrefix}rate:${each.subject}`)
    }
    const argument: ScriptArguments = { instance: instanceId, leaseTtlMs, subjects }
    const reply = await redis.tollgateCredits(keys.length, ...keys, JSON.stringify(argument))
    return JSON.parse(reply) as BankReply
  }

  return {
    instanceId,
    leaseTtlMs,
    isConnected: () => redis.status === 'ready',
    exchange,
    notify(notice) {
      redis.publish(channel, JSON.stringify({ ...notice, from: instanceId })).catch(() => undefined)
    },
    onNotice(listener) {
      listeners.push(listener)
    },
    async close() {
      redis.disconnect()
      subscriber.disconnect()
    },
  }
}
