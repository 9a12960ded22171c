import { randomBytes } from 'node:crypto'
import { InvalidParamsError, SubscriptionLimitError } from '../errors/errors.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import { logFilter } from '../methods/params.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import { type LogFilter, matchLog } from '../subscriptions/matchLog.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import type { RpcContext } from './rpcContext.ts'
import { errorOutcome, runRpcRequest } from './runRpcRequest.ts'

/** What the session needs of a WebSocket: the server adapter provides it. */
export type SocketPort = {
  send(payload: RpcPayload): void
  close(code: number, reason: string): void
  bufferedBytes(): number
}

export type RpcSocketOptions = {
  hub: SubscriptionHub
  maxSubscriptions: number
  maxBufferedBytes: number
  maxBatchSize: number
}

/** Credits per delivered notification (COMPAT.md §2). */
const notificationCredits = { newHeads: 50, logs: 300, newPendingTransactions: 200 } as const

export type RpcSocketSession = { message(text: string): Promise<void>; close(): void }

/**
 * One client WebSocket: the same JSON-RPC as HTTP (runRpcRequest, same credits and errors), plus
 * eth_subscribe / eth_unsubscribe served from the network's shared hub, each notification charged.
 * A client whose balance runs out, or who reads too slowly, is closed with 1008 and a reason.
 */
export function openRpcSocket(
  base: Omit<RpcContext, 'subscriptions'>,
  port: SocketPort,
  options: RpcSocketOptions,
): RpcSocketSession {
  const subscriptions = new Map<string, () => void>()
  let closed = false

  function send(payload: RpcPayload): void {
    if (closed) return
    if (port.bufferedBytes() > options.maxBufferedBytes) {
      shut(1008, 'send buffer full: the client reads too slowly')
      return
    }
    port.send(payload)
  }

  function shut(code: number, reason: string): void {
    if (closed) return
    closed = true
    for (const stop of subscriptions.values()) stop()
    subscriptions.clear()
    port.close(code, reason)
  }

  function notify(id: string, result: unknown): void {
    send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: id, result } }))
  }

  /** Charges a notification; a balance that cannot pay closes the socket. */
  function charge(kind: keyof typeof notificationCredits): boolean {
    const paid = base.meter.chargeNotification(base.key.subject, {
      method: `eth_subscription:${kind}`,
      network: base.network.name,
      credits: notificationCredits[kind],
    })
    if (!paid) shut(1008, 'daily credit limit reached; the balance resets at 00:00 UTC')
    return paid
  }

  function subscribe(params: unknown[]): string {
    if (subscriptions.size >= options.maxSubscriptions)
      throw new SubscriptionLimitError(options.maxSubscriptions)
    const [kind, filterParam] = params
    const id = `0x${randomBytes(16).toString('hex')}`
    let stop: () => void
    if (kind === 'newHeads') {
      stop = options.hub.onHead((event) => {
        if (event.kind === 'head' && charge('newHeads')) notify(id, event.header)
      })
    } else if (kind === 'logs') {
      const filter = (filterParam === undefined ? {} : logFilter(filterParam, 1)) as LogFilter
      stop = options.hub.onLogs((event) => {
        const matching = event.logs.filter((log) => matchLog(filter, log))
        if (matching.length === 0) return
        if (event.kind === 'logs' && !charge('logs')) return
        for (const log of matching) notify(id, log)
      })
    } else if (kind === 'newPendingTransactions') {
      try {
        stop = options.hub.onPendingTransaction((hash) => {
          if (charge('newPendingTransactions')) notify(id, hash)
        })
      } catch {
        throw new InvalidParamsError('invalid argument 0: newPendingTransactions needs an upstream WebSocket')
      }
    } else {
      throw new InvalidParamsError('invalid argument 0: expected newHeads, logs or newPendingTransactions')
    }
    subscriptions.set(id, stop)
    return id
  }

  function unsubscribe(id: unknown): boolean {
    const stop = typeof id === 'string' ? subscriptions.get(id) : undefined
    if (!stop) return false
    stop()
    subscriptions.delete(id as string)
    return true
  }

  const ctx: RpcContext = { ...base, subscriptions: { subscribe, unsubscribe } }

  return {
    async message(text) {
      let request: ReturnType<typeof parseRpcRequest>
      try {
        request = parseRpcRequest(text, { maxBatchSize: options.maxBatchSize })
      } catch (err) {
        send(
          errorOutcome(base, null, chargeRefusal(base.meter, base.key.subject, base.network.name, err).error)
            .payload,
        )
        return
      }
      const outcome = await runRpcRequest(ctx, request)
      if (outcome.body !== '') send(outcome.body)
    },
    close() {
      closed = true
      for (const stop of subscriptions.values()) stop()
      subscriptions.clear()
    },
  }
}
