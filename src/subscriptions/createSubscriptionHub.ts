import type { Logger } from 'pino'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import { callUpstream } from '../upstreams/callUpstream.ts'
import { createUpstreamSocket, type UpstreamSocket } from '../upstreams/createUpstreamSocket.ts'
import type { Log } from './createLogMatcher.ts'

/** A block's logs, in order with the heads: new ones, or those of a block a reorg dropped (removed: true). */
export type LogsEvent = { kind: 'logs' | 'removed'; header: Header; logs: Log[] }

export type SubscriptionHub = {
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

/** Logs remembered per block, to re-send them with removed: true when a reorg drops the block. */
const rememberedBlocks = 128

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
  const recentLogs = new Map<string, Log[]>()
  let logQueue: Promise<void> = Promise.resolve()
  let stopLogs: (() => void) | undefined

  function emitLogs(event: LogsEvent): void {
    for (const listener of logListeners) listener(event)
  }

  function onHeadForLogs(event: HeadEvent): void {
    logQueue = logQueue
      .then(async () => {
        if (event.kind === 'dropped') {
          const logs = recentLogs.get(event.header.hash) ?? []
          recentLogs.delete(event.header.hash)
          emitLogs({
            kind: 'removed',
            header: event.header,
            logs: logs.map((item) => ({ ...item, removed: true })),
          })
          return
        }
        const logs = await callUpstream<Log[]>(network.pool, 'eth_getLogs', [
          { blockHash: event.header.hash },
        ])
        recentLogs.set(event.header.hash, logs)
        if (recentLogs.size > rememberedBlocks) recentLogs.delete(recentLogs.keys().next().value as string)
        emitLogs({ kind: 'logs', header: event.header, logs })
      })
      .catch((err) => log.warn({ err }, 'could not read the logs of a new block'))
  }

  const pendingListeners = new Set<(hash: unknown) => void>()
  let pendingSocket: UpstreamSocket | undefined

  return {
    onHead: (listener) => heads.subscribe(listener),
    onLogs(listener) {
      logListeners.add(listener)
      if (logListeners.size === 1) stopLogs = heads.subscribe(onHeadForLogs)
      return () => {
        logListeners.delete(listener)
        if (logListeners.size === 0) {
          stopLogs?.()
          recentLogs.clear()
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
