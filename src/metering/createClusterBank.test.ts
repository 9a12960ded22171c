import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { until } from '../../test/helpers/until.ts'
import { type BankMessage, createClusterBank } from './createClusterBank.ts'
import { createMemoryBank } from './createMemoryBank.ts'
import type { BankRequest, LeaseNotice } from './creditBank.ts'
import { serveClusterBank } from './serveClusterBank.ts'

/** Both ends of a cluster channel in one process: what one sends, the other receives (a turn later). */
function channelPair() {
  const worker = new EventEmitter()
  const primary = new EventEmitter()
  const sent: BankMessage[] = []
  return {
    sent,
    worker: Object.assign(worker, {
      send: (message: BankMessage) => {
        sent.push(message)
        setImmediate(() => primary.emit('message', structuredClone(message)))
      },
    }),
    primary: Object.assign(primary, {
      send: (message: BankMessage) => setImmediate(() => worker.emit('message', structuredClone(message))),
    }),
  }
}

const request = (dailyLimit: number, subject = 'account:1'): BankRequest => ({
  subjects: [
    {
      subject,
      day: '2026-11-22',
      dailyLimit,
      usedCredits: 0,
      heldCredits: 0,
      freeCredits: 0,
      returning: false,
      flushedCredits: 0,
      seedCredits: 0,
      seedInstances: undefined,
      leaseCredits: 1_000_000,
      leaseMinCredits: 80,
      maxLeaseCredits: 1_000_000,
      creditsPerSecond: 0,
      rateCredits: 0,
      rateMinCredits: 0,
      rateSliceCredits: 0,
      rateReturnedCredits: 0,
    },
  ],
})

describe('a worker exchanging with the primary over the cluster channel', () => {
  it('gets each reply matched to its request by id, whatever the order of the answers', async () => {
    const channels = channelPair()
    const memory = createMemoryBank()
    serveClusterBank(channels.primary, memory.forInstance('worker-1'))
    const bank = createClusterBank({
      channel: channels.worker,
      leaseTtlMs: memory.leaseTtlMs,
      instanceId: 'worker-1',
    })
    // two subjects' days, asked for at once: each reply carries its own request's limit
    const [small, large] = await Promise.all([
      bank.exchange(request(800, 'account:small')),
      bank.exchange(request(80_000, 'account:large')),
    ])
    assert.deepEqual(
      [small, large].map((reply) => (reply.needsSeed ? undefined : reply.subjects[0]?.leasedCredits)),
      [200, 20_000],
    )
    assert.deepEqual(
      channels.sent.map((message) => ('id' in message ? message.id : undefined)),
      [1, 2],
    )
    await bank.close()
    memory.close()
  })

  it('rejects an exchange the primary does not answer in time, and every pending one on close', async () => {
    const silent = Object.assign(new EventEmitter(), { send: () => true })
    const timers = createFakeTimers()
    const bank = createClusterBank({
      channel: silent,
      leaseTtlMs: 15_000,
      instanceId: 'worker',
      timeoutMs: 50,
      timers,
    })
    let late: unknown
    const unanswered = bank.exchange(request(800)).catch((err: unknown) => {
      late = err
    })
    await timers.advance(49)
    assert.equal(late, undefined, 'still waiting at 49 ms')
    await timers.advance(1)
    await unanswered
    assert.match(String(late), /did not answer a credit exchange in time/)
    const pending = bank.exchange(request(800))
    await bank.close()
    await assert.rejects(pending, /closed/)
  })

  it("passes a worker's lease notice to the other workers, not back to itself", async () => {
    const memory = createMemoryBank()
    const workers = [1, 2, 3].map((id) => {
      const channels = channelPair()
      serveClusterBank(channels.primary, memory.forInstance(`worker-${id}`))
      const bank = createClusterBank({
        channel: channels.worker,
        leaseTtlMs: memory.leaseTtlMs,
        instanceId: `worker-${id}`,
      })
      const heard: LeaseNotice[] = []
      bank.onNotice((notice) => heard.push(notice))
      return { bank, heard }
    })
    const notice: LeaseNotice = {
      kind: 'recall',
      account: 'account:1',
      subjects: ['account:1'],
      day: '2026-11-22',
    }
    workers[0]?.bank.notify(notice)
    await until(
      () => workers.slice(1).every(({ heard }) => heard.length === 1),
      'the notice to reach the others',
    )
    assert.deepEqual(
      workers.map(({ heard }) => heard),
      [[], [notice], [notice]],
    )
    await Promise.all(workers.map(({ bank }) => bank.close()))
    memory.close()
  })

  it('drops a malformed notice, from a worker or from the primary', async () => {
    const memory = createMemoryBank()
    const [from, to] = [1, 2].map((id) => {
      const channels = channelPair()
      serveClusterBank(channels.primary, memory.forInstance(`worker-${id}`))
      const bank = createClusterBank({
        channel: channels.worker,
        leaseTtlMs: memory.leaseTtlMs,
        instanceId: `worker-${id}`,
      })
      const heard: LeaseNotice[] = []
      bank.onNotice((notice) => heard.push(notice))
      return { bank, heard, channels }
    })
    if (!from || !to) throw new Error('unreachable')
    const bad = { kind: 'recall', account: 'account:1', day: '2026-11-22' } as unknown as LeaseNotice
    from.bank.notify(bad)
    to.channels.worker.emit('message', { tollgate: 'bank', notice: bad })
    const good: LeaseNotice = { kind: 'returned', account: 'account:1', subjects: [], day: '2026-11-22' }
    from.bank.notify(good)
    await until(() => to.heard.length > 0, 'the good notice to arrive')
    assert.deepEqual(to.heard, [good])
    await Promise.all([from.bank.close(), to.bank.close()])
    memory.close()
  })

  it("passes the primary bank's failure on as a rejection", async () => {
    const channels = channelPair()
    serveClusterBank(channels.primary, {
      instanceId: 'worker',
      leaseTtlMs: 15_000,
      exchange: async () => {
        throw new Error('broken')
      },
      close: async () => {},
      notify: () => {},
      onNotice: () => {},
    })
    const bank = createClusterBank({ channel: channels.worker, leaseTtlMs: 15_000, instanceId: 'worker' })
    await assert.rejects(bank.exchange(request(800)), /the primary process's bank failed: broken/)
    await bank.close()
  })
})
