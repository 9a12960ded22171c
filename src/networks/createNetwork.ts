import type { NetworkConfig } from '../config/configSchema.ts'
import { createUpstream } from '../upstreams/createUpstream.ts'
import { createUpstreamPool, type UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { createHeadTracker, type HeadTracker } from './createHeadTracker.ts'

export type Network = {
  name: string
  chainId: number
  hosts: readonly string[]
  pool: UpstreamPool
  heads: HeadTracker
  close(): Promise<void>
}

export type CreateNetworkOptions = {
  timeoutMs: number
  maxResponseBytes: number
  connectionsPerUpstream: number
  headPollMs: number
  onError?: (err: unknown) => void
}

export function createNetwork(config: NetworkConfig, options: CreateNetworkOptions): Network {
  const upstreams = config.upstreams.map((upstream) =>
    createUpstream(upstream, {
      connections: options.connectionsPerUpstream,
      maxResponseBytes: options.maxResponseBytes,
    }),
  )
  const pool = createUpstreamPool(upstreams, { timeoutMs: options.timeoutMs })
  const heads = createHeadTracker(pool.members, {
    pollMs: options.headPollMs,
    timeoutMs: Math.min(options.timeoutMs, 5_000),
    ...(options.onError ? { onError: options.onError } : {}),
  })
  return {
    name: config.name,
    chainId: config.chainId,
    hosts: config.hosts,
    pool,
    heads,
    async close() {
      heads.close()
      await pool.close()
    },
  }
}
