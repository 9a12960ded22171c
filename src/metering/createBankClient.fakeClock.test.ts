import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { DailyLimitError } from '../errors/limitErrors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { createMeter } from './createMeter.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { BankRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import type { MeterSubject } from './meterTypes.ts'

const payer: MeterSubject = {
  accountId: 1,
  keyId: 10,
  accountCounter: 'account:1',
  keyCounter: 'key:10',
  accountDailyCredits: 1_000,
  accountCreditsPerSecond: 1_000_000,
  keyDailyCredits: undefined,
  keyCreditsPerSecond: undefined,
}

/**
 * A bank at the end of the account's balance: 50 credits to lease, the rest held by other
 * instances (500 free there). It records the exchanges and the notices sent.
 */
function endOfBalanceBank() {
  const exchanges: BankRequest[] = []
  const notices: LeaseNotice[] = []
  const pool = { credits: 50, leased: 0 }
  const bank: CreditBank = {
    instanceId: 'this-instance',
    leaseTtlMs: 15_000,
    async exchange(request) {
      exchanges.push(request)
      return {
        needsSeed: false,
        subjects: request.subjects.map((each) => {
          const lease = Math.min(each.leaseCredits, pool.credits - pool.leased)
          pool.leased += lease
          return {
            leasedCredits: lease,
            grantedCredits: 1_000,
            rateGrantedCredits: each.rateCredits,
            rateWaitMs: 0,
            heldCredits: each.heldCredits,
            othersFreeCredits: 500,
          }
        }),
      }
    },
    notify: (notice) => notices.push(notice),
    onNotice: () => {},
    close: async () => {},
  }
  return { bank, exchanges, notices }
}

async function startMeter(bank: CreditBank, recallMs: number, flushMs = 600_000) {
  const timers = createFakeTimers()
  const store = createSqliteUsageStore(openSqlite(':memory:'))
  const meter = await createMeter({ store, clock: timers, timers, flushMs, bank, recallMs })
  return { meter, timers }
}

describe('the bank client on a fake clock', () => {
  it('a call that waits for a recall is refused when the bound passes, not a millisecond before', async () => {
    const { bank, notices } = endOfBalanceBank()
    const { meter, timers } = await startMeter(bank, 200)
    await meter.admit(payer, 5)
    let outcome: unknown
    Promise.resolve(meter.admit(payer, 100)).then(
      (admission) => (outcome = admission),
      (err: unknown) => (outcome = err),
    )
    const settled = () => outcome
    await timers.advance(0)
    assert.deepEqual(
      notices.map((notice) => notice.kind),
      ['recall'],
    )
    await timers.advance(199)
    assert.equal(settled(), undefined, 'still waiting at 199 ms')
    await timers.advance(1)
    assert.ok(settled() instanceof DailyLimitError, 'refused at 200 ms')
    await meter.close()
  })

  it('every flushMs, an account that holds a lease is reported (and its lease renewed)', async () => {
    const { bank, exchanges } = endOfBalanceBank()
    const { meter, timers } = await startMeter(bank, 200, 1_000)
    await meter.admit(payer, 5)
    assert.equal(exchanges.length, 1)
    await timers.advance(999)
    assert.equal(exchanges.length, 1)
    await timers.advance(1)
    assert.equal(exchanges.length, 2)
    await timers.advance(1_000)
    assert.equal(exchanges.length, 3)
    await meter.close()
  })
})
