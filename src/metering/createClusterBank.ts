import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import type { BankReply, BankRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import { isLeaseNotice } from './isLeaseNotice.ts'

/** A message on the cluster channel between a worker and the primary process. */
export type BankMessage =
  | { tollgate: 'bank'; id: number; request: BankRequest }
  | { tollgate: 'bank'; id: number; reply: BankReply }
  | { tollgate: 'bank'; id: number; error: string }
  /** A lease notice: from a worker, for the primary to pass on to the others; from the primary, one of theirs. */
  | { tollgate: 'bank'; notice: LeaseNotice }

/** The worker's end of the cluster channel (`process` in a worker). */
export type BankChannel = {
  send(message: BankMessage): unknown
  on(event: 'message', listener: (message: unknown) => void): unknown
  off(event: 'message', listener: (message: unknown) => void): unknown
}

export type ClusterBankOptions = {
  channel: BankChannel
  /** The primary's bank lease ttl, which the meter plans its renewals by. */
  leaseTtlMs: number
  /** The id the primary's bank knows this worker by (CreditBank.instanceId). */
  instanceId: string
  /** Longest wait for one exchange; a slower (or gone) primary counts as the bank down. */
  timeoutMs?: number
  /** The exchange deadline runs on these. */
  timers?: Timers
}

export function isBankMessage(message: unknown): message is BankMessage {
  return (
    typeof message === 'object' && message !== null && (message as { tollgate?: unknown }).tollgate === 'bank'
  )
}

/**
 * A worker's credit bank: each exchange is a request to the primary process, which holds the one
 * in-memory bank of all workers (createMemoryBank.ts), answered by id on the cluster channel; lease
 * notices go the same way, and the primary passes them on to the other workers.
 */
export function createClusterBank({
  channel,
  leaseTtlMs,
  instanceId,
  timeoutMs = 1_000,
  timers = systemTimers,
}: ClusterBankOptions): CreditBank {
  let nextId = 1
  const pending = new Map<number, { resolve(reply: BankReply): void; reject(err: Error): void }>()
  const listeners: ((notice: LeaseNotice) => void)[] = []
  const onMessage = (message: unknown) => {
    if (!isBankMessage(message) || 'request' in message) return
    if ('notice' in message) {
      if (isLeaseNotice(message.notice)) for (const listener of listeners) listener(message.notice)
      return
    }
    const waiter = pending.get(message.id)
    if (!waiter) return
    pending.delete(message.id)
    if ('reply' in message) waiter.resolve(message.reply)
    else waiter.reject(new Error(`the primary process's bank failed: ${message.error}`))
  }
  channel.on('message', onMessage)

  return {
    instanceId,
    leaseTtlMs,
    exchange(request) {
      const id = nextId++
      return new Promise<BankReply>((resolve, reject) => {
        const timer = timers.setTimeout(() => {
          pending.delete(id)
          reject(new Error('the primary process did not answer a credit exchange in time'))
        }, timeoutMs)
        pending.set(id, {
          resolve: (reply) => {
            timers.clearTimeout(timer)
            resolve(reply)
          },
          reject: (err) => {
            timers.clearTimeout(timer)
            reject(err)
          },
        })
        try {
          channel.send({ tollgate: 'bank', id, request })
        } catch (err) {
          pending.delete(id)
          timers.clearTimeout(timer)
          reject(err instanceof Error ? err : new Error(String(err)))
        }
      })
    },
    notify(notice) {
      try {
        channel.send({ tollgate: 'bank', notice })
      } catch {
        // the primary is gone: the exchanges fail too, and onRedisDown applies
      }
    },
    onNotice(listener) {
      listeners.push(listener)
    },
    async close() {
      channel.off('message', onMessage)
      for (const waiter of pending.values()) waiter.reject(new Error('the credit bank is closed'))
      pending.clear()
    },
  }
}
