import { randomBytes } from 'node:crypto'
import { SubscriptionLimitError } from '../errors/limitErrors.ts'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { logFilter } from '../methods/logFilter.ts'
import { type NotificationKind, priceOf } from '../methods/priceOf.ts'
import { createLogMatcher, type LogFilter } from './createLogMatcher.ts'
import type { SubscriptionHub } from './createSubscriptionHub.ts'

export type ClientSubscriptionsOptions = {
  hub: SubscriptionHub
  maxSubscriptions: number
  /** Sends one notification's bytes to the client. */
  send(payload: string): void
  /**
   * Charges one delivered notification at its price; false when the balance cannot pay (nothing is
   * sent then, and the caller ends the connection).
   */
  charge(usage: { method: string; credits: number }): boolean
}

export type ClientSubscriptions = {
  /** eth_subscribe: the new subscription's id, or throws the -32602 / -32005 that refuses it. */
  subscribe(params: unknown[]): string
  /** eth_unsubscribe: whether the id was one of this client's. */
  unsubscribe(id: unknown): boolean
  readonly size: number
  /** Each live subscription's params, as eth_subscribe got them (to check them again when the key's allowlists change). */
  params(): IterableIterator<unknown[]>
  /** Ends every subscription (the connection closed). */
  stopAll(): void
}

/**
 * One client's subscriptions, served from its network's shared hub: which notifications it gets
 * (its logs filter), and what each costs (docs/compatibility.md §2: newHeads per block, logs per block
 * with a match, each pending transaction).
 */
export function createClientSubscriptions(options: ClientSubscriptionsOptions): ClientSubscriptions {
  const { hub } = options
  const subscriptions = new Map<string, { stop: () => void; params: unknown[] }>()

  function paid(kind: NotificationKind): boolean {
    const costCredits = priceOf({ kind: 'notification', subscription: kind })
    return options.charge({ method: `eth_subscription:${kind}`, credits: costCredits })
  }

  function notify(id: string, result: unknown): void {
    options.send(
      JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: id, result } }),
    )
  }

  function listen(id: string, kind: unknown, filterParam: unknown): () => void {
    if (kind === 'newHeads') {
      return hub.onHead((event) => {
        if (event.kind === 'head' && paid('newHeads')) notify(id, event.header)
      })
    }
    if (kind === 'logs') {
      // prepared once: each log then costs the same whatever the filter's lists hold
      const matches = createLogMatcher(
        (filterParam === undefined ? {} : logFilter(filterParam, 1)) as LogFilter,
      )
      return hub.onLogs((event) => {
        const matching = event.logs.filter(matches)
        if (matching.length === 0) return
        // logs a reorg dropped are sent again with removed: true, free
        if (event.kind === 'logs' && !paid('logs')) return
        for (const log of matching) notify(id, log)
      })
    }
    if (kind === 'newPendingTransactions') {
      try {
        return hub.onPendingTransaction((hash) => {
          if (paid('newPendingTransactions')) notify(id, hash)
        })
      } catch {
        throw new InvalidParamsError('invalid argument 0: newPendingTransactions needs an upstream WebSocket')
      }
    }
    throw new InvalidParamsError('invalid argument 0: expected newHeads, logs or newPendingTransactions')
  }

  return {
    subscribe(params) {
      if (subscriptions.size >= options.maxSubscriptions)
        throw new SubscriptionLimitError(options.maxSubscriptions)
      const [kind, filterParam] = params
      const id = `0x${randomBytes(16).toString('hex')}`
      subscriptions.set(id, { stop: listen(id, kind, filterParam), params })
      return id
    },
    unsubscribe(id) {
      const subscription = typeof id === 'string' ? subscriptions.get(id) : undefined
      if (!subscription) return false
      subscription.stop()
      subscriptions.delete(id as string)
      return true
    },
    get size() {
      return subscriptions.size
    },
    *params() {
      for (const subscription of subscriptions.values()) yield subscription.params
    },
    stopAll() {
      for (const subscription of subscriptions.values()) subscription.stop()
      subscriptions.clear()
    },
  }
}
