import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createTestSchema } from '../../test/helpers/createTestSchema.ts'
import { removeKeysWithPrefix } from '../../test/helpers/testRedis.ts'
import { testServers } from '../../test/helpers/testServers.ts'
import {
  createUnlimitedKey,
  startPassThrough,
  startTollgate,
  startTollgateProcess,
  stopChild,
  writeTollgateConfig,
} from './processes.ts'

/** The configurations the workload is replayed against, each in front of the counting proxy. */
export const workloadTargets = {
  node: 'the node (through the counting proxy)',
  'pass-through': 'plain pass-through',
  tollgate: 'tollgate, defaults (SQLite)',
  fleet: 'tollgate, three instances on Redis (and Postgres), calls spread at random',
} as const

export type WorkloadTargetName = keyof typeof workloadTargets

export type WorkloadTarget = {
  /** Where clients call (one of them at random, for each call). */
  urls: string[]
  /** Whether it asks the node things of its own (tollgate's head polls and fee indexer). */
  hasBackground: boolean
  /** Stops what it started (by pid) and removes what it wrote to Redis and Postgres. */
  stop(): Promise<void>
}

/** Starts one configuration in front of `proxyUrl`, with its files in `dir`. */
export async function startWorkloadTarget(
  name: WorkloadTargetName,
  proxyUrl: string,
  dir: string,
): Promise<WorkloadTarget> {
  if (name === 'node') return { urls: [proxyUrl], hasBackground: false, stop: async () => undefined }
  if (name === 'pass-through') {
    const passThrough = await startPassThrough(proxyUrl, 'workload')
    return { urls: [passThrough.url], hasBackground: false, stop: () => stopChild(passThrough.pid) }
  }
  if (name === 'tollgate') {
    const tollgate = await startTollgate(dir, 'workload', { url: proxyUrl })
    return { urls: [tollgate.url], hasBackground: true, stop: () => stopChild(tollgate.pid) }
  }
  return startFleet(proxyUrl, dir)
}

/**
 * Three tollgates sharing one Redis (the shared cache, credits, the shown head) under a key prefix of
 * the bench's own, and one Postgres schema of its own (one key for all, the fee indexer's lease), on
 * the test servers' URLs (test/helpers/testServers.ts); both removed when stopped.
 */
async function startFleet(proxyUrl: string, dir: string): Promise<WorkloadTarget> {
  const keyPrefix = `tollgate-bench-${randomBytes(4).toString('hex')}:`
  const schema = await createTestSchema()
  const config = {
    storage: { postgres: schema.url },
    redis: { url: testServers.redisUrl, keyPrefix },
  }
  const files = [1, 2, 3].map((each) => writeTollgateConfig(dir, `fleet-${each}`, { url: proxyUrl }, config))
  const pids: (number | undefined)[] = []
  const stop = async () => {
    await Promise.all(pids.map(stopChild))
    // the gateways write to Redis as they stop: the keys go after that
    const redis = new Redis(testServers.redisUrl)
    await removeKeysWithPrefix(redis, keyPrefix)
    redis.disconnect()
    await schema.drop()
  }
  try {
    const key = createUnlimitedKey(files[0] as string)
    const origins: string[] = []
    for (const file of files) {
      const started = await startTollgateProcess(file)
      pids.push(started.pid)
      origins.push(started.origin)
    }
    return { urls: origins.map((origin) => `${origin}/v3/${key}`), hasBackground: true, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
