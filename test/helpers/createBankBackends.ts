import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { type BankMessage, createClusterBank } from '../../src/metering/createClusterBank.ts'
import { createMemoryBank } from '../../src/metering/createMemoryBank.ts'
import { createRedisBank } from '../../src/metering/createRedisBank.ts'
import type { CreditBank } from '../../src/metering/creditBank.ts'
import { serveClusterBank } from '../../src/metering/serveClusterBank.ts'
import { testServers } from './testServers.ts'

/** A bank's backend: instances that share its balances, each under an id of its own. */
export type Backend = { instance(): Promise<CreditBank>; close(): Promise<void> }

/**
 * The three credit banks, to run one suite against: in memory, the primary's memory bank over the
 * cluster channel (`tollgate start --workers N` without Redis), and Redis (each backend opened under a
 * key prefix of its own below `keyPrefix`).
 */
export function createBankBackends(keyPrefix: string): Record<string, (leaseTtlMs: number) => Backend> {
  return {
    memory(leaseTtlMs) {
      const bank = createMemoryBank({ leaseTtlMs })
      return {
        instance: async () => bank.forInstance(randomUUID()),
        close: async () => bank.close(),
      }
    },
    cluster(leaseTtlMs) {
      const memory = createMemoryBank({ leaseTtlMs })
      const opened: CreditBank[] = []
      return {
        async instance() {
          const worker = new EventEmitter()
          const primary = new EventEmitter()
          const deliver = (to: EventEmitter) => (message: BankMessage) =>
            setImmediate(() => to.emit('message', structuredClone(message)))
          const instanceId = randomUUID()
          serveClusterBank(Object.assign(primary, { send: deliver(worker) }), memory.forInstance(instanceId))
          const bank = createClusterBank({
            channel: Object.assign(worker, { send: deliver(primary) }),
            leaseTtlMs,
            instanceId,
          })
          opened.push(bank)
          return bank
        },
        async close() {
          await Promise.all(opened.map((bank) => bank.close()))
          memory.close()
        },
      }
    },
    redis(leaseTtlMs) {
      const ownPrefix = `${keyPrefix}${randomUUID()}:`
      const opened: CreditBank[] = []
      return {
        async instance() {
          const bank = await createRedisBank({
            url: testServers.redisUrl,
            keyPrefix: ownPrefix,
            leaseTtlMs,
          })
          opened.push(bank)
          return bank
        },
        async close() {
          await Promise.all(opened.map((bank) => bank.close()))
        },
      }
    },
  }
}
