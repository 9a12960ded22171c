import type { Logger } from 'pino'
import { type HeadEvent, type Header, rememberedBlocks } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import { callUpstream } from '../upstreams/callUpstream.ts'
import { createUpstreamSocket, type UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import type { Log } from './createLogMatcher.ts'

/** A block's logs, in order with the heads: new ones, or those of a block a reorg dropped (removed: true). */
export type LogsEvent = { kind: 'logs' | 'removed'; header: Header; logs: Log[] }

/** Client subscriptions of a network now, by kind (eth_subscribe's first parameter). */
export type SubscriptionCounts = { newHeads: number; logs: number; newPendingTransactions: number }

export type SubscriptionHub = {
  /** How many listeners each kind has now (for /metrics). */
  counts(): SubscriptionCounts
  onHead(listener: (event: HeadEvent) => void): () => void
  onLogs(listener: (event: LogsEvent) => void): () => void
  /** Throws when the network has no upstream WebSocket (pending transactions cannot be polled). */
  onPendingTransaction(listener: (hash: unknown) => void): () => void
  close(): void
}

export type SubscriptionHubOptions = {
  network: Network
  /** The network's upstream WebSocket URLs, for newPendingTransactions (tried in turn). */
  wsUrls: string[]
  /** How long a request on the upstream WebSocket may wait for its answer. */
  requestTimeoutMs: number
  log: Logger
}

/**
 * The logs of the chain's last rememberedBlocks blocks are kept, to re-send them with removed: true
 * when a reorg drops their block, within this many bytes (counted as their JSON text).
 */
const rememberedLogBytes = 64 * 1024 * 1024

/**
 * What one network's WebSocket clients share: the network's head tracker's chain of heads (no head
 * subscription or poll of its own), one eth_getLogs per new block for every log subscription, one
 * upstream newPendingTransactions subscription (its WebSocket is opened by the first listener and
 * closed with the last). Started by the first listener, stopped with the last.
 */
export function createSubscriptionHub(options: SubscriptionHubOptions): SubscriptionHub {
  const { network, log } = options
  const heads = network.heads

  const logListeners = new Set<(event: LogsEvent) => void>()
  /** By block hash, oldest first, with the bytes each block's logs count. */
  const recentLogs = new Map<string, { logs: Log[]; bytes: number }>()
  let recentBytes = 0
  let logQueue: Promise<void> = Promise.resolve()
  let stopLogs: (() => void) | undefined

  function emitLogs(event: LogsEvent): void {
    for (const listener of logListeners) listener(event)
  }

  function forget(hash: string): Log[] {
    const kept = recentLogs.get(hash)
    if (!kept) return []
    recentLogs.delete(hash)
    recentBytes -= kept.bytes
    return kept.logs
  }

  function remember(hash: string, logs: Log[]): void {
    const bytes = logs.length === 0 ? 0 : JSON.stringify(logs).length
    recentLogs.set(hash, { logs, bytes })
    recentBytes += bytes
    while (recentLogs.size > rememberedBlocks || recentBytes > rememberedLogBytes) {
      forget(recentLogs.keys().next().value as string)
    }
  }

  function onHeadForLogs(event: HeadEvent): void {
    if (event.kind !== 'head' && event.kind !== 'dropped') return
    const { header } = event
    logQueue = logQueue
      .then(async () => {
        if (event.kind === 'dropped') {
          const logs = forget(header.hash)
          emitLogs({ kind: 'removed', header, logs: logs.map((item) => ({ ...item, removed: true })) })
          return
        }
        const logs = await callUpstream<Log[]>(network.pool, 'eth_getLogs', [{ blockHash: header.hash }])
        remember(header.hash, logs)
        emitLogs({ kind: 'logs', header, logs })
      })
      .catch((err) => log.warn({ err }, 'could not read the logs of a new block'))
  }

  const pendingListeners = new Set<(hash: unknown) => void>()
  let pendingSocket: UpstreamSocket | undefined

  let headListeners = 0

  return {
    counts: () => ({
      newHeads: headListeners,
      logs: logListeners.size,
      newPendingTransactions: pendingListeners.size,
    }),
    onHead(listener) {
      const stop = heads.subscribe(listener)
      headListeners++
      let stopped = false
      return () => {
        if (stopped) return
        stopped = true
        headListeners--
        stop()
      }
    },
    onLogs(listener) {
      logListeners.add(listener)
      if (logListeners.size === 1) stopLogs = heads.subscribe(onHeadForLogs)
      return () => {
        logListeners.delete(listener)
        if (logListeners.size === 0) {
          stopLogs?.()
          recentLogs.clear()
          recentBytes = 0
        }
      }
    },
    onPendingTransaction(listener) {
      if (options.wsUrls.length === 0) throw new Error('no upstream WebSocket')
      pendingListeners.add(listener)
      if (!pendingSocket) {
        pendingSocket = createUpstreamSocket({
          urls: options.wsUrls,
          requestTimeoutMs: options.requestTimeoutMs,
          onError: (err, label) =>
            log.warn({ err: (err as Error).message, upstream: label }, 'upstream WebSocket error'),
        })
        pendingSocket.subscribe(['newPendingTransactions'], (hash) => {
          for (const each of pendingListeners) each(hash)
        })
      }
      return () => {
        if (!pendingListeners.delete(listener) || pendingListeners.size > 0) return
        pendingSocket?.close()
        pendingSocket = undefined
      }
    },
    close() {
      stopLogs?.()
      pendingSocket?.close()
      pendingSocket = undefined
    },
  }
}
