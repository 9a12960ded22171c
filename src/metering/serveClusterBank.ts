import { type BankMessage, isBankMessage } from './createClusterBank.ts'
import type { CreditBank } from './creditBank.ts'
import { isLeaseNotice } from './isLeaseNotice.ts'

/** The primary's end of one worker's cluster channel (a cluster `Worker`). */
export type WorkerChannel = {
  send(message: BankMessage): unknown
  on(event: 'message', listener: (message: unknown) => void): unknown
}

/**
 * Answers one worker's credit exchanges (createClusterBank.ts) from `bank`, the primary's in-memory
 * bank as that worker sees it, and passes lease notices between it and the other workers. A reply
 * to a worker that has gone is dropped.
 */
export function serveClusterBank(worker: WorkerChannel, bank: CreditBank): void {
  // the other workers' lease notices, through the bank they share
  bank.onNotice((notice) => send(worker, { tollgate: 'bank', notice }))
  worker.on('message', (message) => {
    if (!isBankMessage(message)) return
    if ('notice' in message) {
      // a worker's malformed notice goes no further
      if (isLeaseNotice(message.notice)) bank.notify(message.notice)
      return
    }
    if (!('request' in message)) return
    const { id } = message
    bank.exchange(message.request).then(
      (reply) => send(worker, { tollgate: 'bank', id, reply }),
      (err) =>
        send(worker, { tollgate: 'bank', id, error: err instanceof Error ? err.message : String(err) }),
    )
  })
}

function send(worker: WorkerChannel, message: BankMessage): void {
  try {
    worker.send(message)
  } catch {
    // the worker is gone: its lease expires in the bank
  }
}
