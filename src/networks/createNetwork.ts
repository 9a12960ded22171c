import type { Logger } from 'pino'
import { createRpcCache, type RpcCache } from '../cache/createRpcCache.ts'
import type { SharedHead } from '../cache/createSharedHeads.ts'
import type { SharedStore } from '../cache/sharedStore.ts'
import {
  type Config,
  logsLimitDefaults,
  type NetworkConfig,
  type UpstreamConfig,
} from '../config/configSchema.ts'
import { CallCount } from '../failsafe/CallCount.ts'
import { createHistoryProber, type HistoryProber } from '../upstreams/createHistoryProber.ts'
import { createUpstream } from '../upstreams/createUpstream.ts'
import { createUpstreamPool, type UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import type { HeadFleet } from './createHeadSource.ts'
import { createHeadTracker } from './createHeadTracker.ts'
import { createNetworkHead, type NetworkHead } from './createNetworkHead.ts'
import type { HeadTracker } from './HeadTracker.ts'
import { toMemberKeys } from './toMemberKeys.ts'

export type Network = {
  name: string
  chainId: number
  hosts: readonly string[]
  pool: UpstreamPool
  /** Partner providers (docs/compatibility.md §7 failover); undefined when none are configured. */
  partners: UpstreamPool | undefined
  /** Methods that may fail over to the partners. */
  failoverMethods: ReadonlySet<string>
  /**
   * The chain of heads as it moves (the head tracker: its events, polls, newest header, genesis, stats),
   * for what follows the chain block by block; its head's numbers are read from `head`, the one view of them.
   */
  heads: Omit<HeadTracker, 'latest' | 'finalized' | 'hashAt' | 'hasBlock' | 'polledBlock'>
  /** The network's head: latest, finalized and what clients have been shown. Every reader of a head number reads it here. */
  head: NetworkHead
  /** What history each upstream keeps (earliest state and block), for routing calls pinned to a block. */
  history: HistoryProber
  /** Undefined when the cache is off. */
  cache: RpcCache | undefined
  /** How long a call may take, from its start to its answer. */
  timeoutMs: number
  /**
   * Requests and WebSocket messages under way on this network (counted from its lookup to their
   * answer): a network a reload replaced stops once they are done.
   */
  calls: CallCount
  /** What a call keeps for the partners when it may fail over: the primaries get the rest of its time. */
  partnerReserveMs: number
  /** eth_getLogs limits (docs/compatibility.md §7): the widest block range, the most logs in an answer. */
  maxLogsBlockRange: number
  maxLogsResults: number
  /**
   * The per-transaction gas cap (EIP-7825) eth_call and eth_estimateGas `gas` is lowered to: the
   * configured `maxTransactionGas`, lowered by a node's refusal naming a smaller one (gasCapOf: in
   * a node's own wording, below the gas the call carried, not below 2^20).
   */
  maxTransactionGas: bigint | undefined
  /** A node refused a call without `gas` over the cap (its own default is above it): such calls are sent with the cap. */
  fillsTransactionGas: boolean
  close(): Promise<void>
}

export type CreateNetworkOptions = Pick<Config, 'upstreams' | 'cache'> & {
  failoverMethods: ReadonlySet<string>
  /** How often upstreams are asked for their head (upstreams.headPollMs merged with the deprecated keys). */
  headPollMs?: number
  log?: Logger
  /** What instances share through Redis: immutable answers and the highest block number shown. */
  shared?: { store: SharedStore; head: SharedHead } | undefined
  /** The instances this network's head polls are shared with (createFleetHeads); undefined: it polls alone. */
  fleet?: HeadFleet | undefined
}

export function createNetwork(config: NetworkConfig, options: CreateNetworkOptions): Network {
  const settings = options.upstreams
  const log = options.log?.child({ network: config.name })
  // what a node's refusal says of the network's per-transaction gas cap, for the calls after it
  const onGasCap = (cap: bigint, filled: boolean) => {
    const known = network.maxTransactionGas
    if (known === undefined || cap < known) {
      network.maxTransactionGas = cap
      log?.info({ maxTransactionGas: Number(cap) }, 'a node refused gas over its per-transaction cap')
    }
    if (filled) network.fillsTransactionGas = true
  }
  // a partner's own cap says nothing of the network's upstreams: only theirs is learned
  const poolOf = (upstreams: UpstreamConfig[], learnsGasCap: boolean) =>
    createUpstreamPool(
      upstreams.map((upstream) =>
        createUpstream(upstream, {
          connections: settings.connectionsPerUpstream,
          maxResponseBytes: settings.maxResponseBytes,
        }),
      ),
      {
        timeoutMs: settings.timeoutMs,
        attemptTimeoutMs: settings.attemptTimeoutMs,
        maxAttempts: settings.maxAttempts,
        maxLagBlocks: settings.maxLagBlocks,
        breakerFailures: settings.breaker.failures,
        breakerCooldownMs: settings.breaker.cooldownMs,
        breakerMaxCooldownMs: settings.breaker.maxCooldownMs,
        hedge: settings.hedge.enabled ? settings.hedge : undefined,
        ...(learnsGasCap ? { onGasCap } : {}),
      },
    )
  const pool = poolOf(config.upstreams, true)
  const partners = config.partners.length > 0 ? poolOf(config.partners, false) : undefined
  const heads = createHeadTracker(pool, {
    wsUrls: config.upstreams.map((upstream) => upstream.ws),
    pollMs: options.headPollMs ?? settings.headPollMs,
    timeoutMs: Math.min(settings.timeoutMs, 5_000),
    maxLagBlocks: settings.maxLagBlocks,
    requestTimeoutMs: settings.attemptTimeoutMs,
    ...(log ? { log } : {}),
    fleet: options.fleet,
    memberKeys: toMemberKeys(config.upstreams),
  })
  const history = createHistoryProber(pool, {
    intervalMs: settings.historyProbeMs,
    timeoutMs: Math.min(settings.timeoutMs, 5_000),
  })
  const cache = options.cache.enabled
    ? createRpcCache({
        maxBytes: options.cache.maxBytes,
        maxEntryBytes: options.cache.maxEntryBytes,
        shared: options.shared?.store,
        chainTip: () => heads.latest()?.number,
        blockHashAt: heads.hashAt,
        hasBlock: heads.hasBlock,
        headHash: () => heads.header()?.hash,
      })
    : undefined
  // made first: the shown head is lowered before the cache and the others hear of a fork
  const head = createNetworkHead(heads, {
    shared: options.shared?.head,
    // a kept eth_blockNumber of before a lower (here or by another instance) would raise it again
    onLower: () => cache?.newHead(),
    reached: () => pool.membersHead(),
  })
  if (cache) followChain(cache, heads)
  const network: Network = {
    name: config.name,
    chainId: config.chainId,
    hosts: config.hosts,
    pool,
    partners,
    failoverMethods: options.failoverMethods,
    heads,
    head,
    history,
    cache,
    timeoutMs: settings.timeoutMs,
    calls: new CallCount(),
    partnerReserveMs: Math.min(settings.attemptTimeoutMs, settings.timeoutMs / 2),
    maxLogsBlockRange: config.maxLogsBlockRange ?? logsLimitDefaults.maxLogsBlockRange,
    maxLogsResults: config.maxLogsResults ?? logsLimitDefaults.maxLogsResults,
    maxTransactionGas: config.maxTransactionGas === undefined ? undefined : BigInt(config.maxTransactionGas),
    fillsTransactionGas: false,
    async close() {
      head.close()
      heads.close()
      history.close()
      cache?.close()
      await Promise.all([pool.close(), partners?.close()])
    },
  }
  return network
}

/** The cache follows the chain: head-scoped answers dropped on every head, blocks a reorg left, a new chain's answers. */
function followChain(cache: RpcCache, heads: HeadTracker): void {
  heads.subscribe((event) => {
    switch (event.kind) {
      case 'head': {
        cache.newHead()
        // the latest block as a poll fetched it: a client's call for it in that shape asks no node
        const block = heads.polledBlock(event.header.hash)
        if (block) cache.keepLatestBlock(block)
        return
      }
      case 'fork':
        cache.newHead()
        // with Redis, on every instance (the tracker logs it)
        if (event.pastFinality) void cache.forget('blocks at or below finalized changed')
        return
      case 'dropped':
        cache.dropBlock(event.header.hash)
        return
      case 'newChain':
        // with Redis, its answers are kept and read under the new genesis from now on
        cache.dropImmutable()
        void cache.identify(event.genesis)
        return
    }
  })
}
