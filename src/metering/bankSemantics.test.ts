import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { createBankBackends } from '../../test/helpers/createBankBackends.ts'
import { createTestPrefix } from '../../test/helpers/testRedis.ts'
import type { BankReply, BankSubjectRequest, CreditBank } from './creditBank.ts'

const prefix = createTestPrefix()
after(() => prefix.remove())
const backends = createBankBackends(prefix.keyPrefix)

const today = new Date().toISOString().slice(0, 10)

/** A request with nothing held, nothing spent, a balance of 1,000 and no per-second limit. */
const ask = (fields: Partial<BankSubjectRequest> = {}): BankSubjectRequest => ({
  subject: 'account:1',
  day: today,
  dailyLimit: 1_000,
  usedCredits: 0,
  heldCredits: 0,
  freeCredits: 0,
  returning: false,
  flushedCredits: 0,
  seedCredits: undefined,
  seedInstances: undefined,
  leaseCredits: 0,
  leaseMinCredits: 0,
  maxLeaseCredits: 10_000,
  creditsPerSecond: 0,
  rateCredits: 0,
  rateMinCredits: 0,
  rateSliceCredits: 0,
  rateReturnedCredits: 0,
  ...fields,
})

/** A reply with nothing granted. */
const answer = (fields: Partial<Record<string, number>> = {}) => ({
  leasedCredits: 0,
  grantedCredits: 0,
  rateGrantedCredits: 0,
  rateWaitMs: 0,
  heldCredits: 0,
  othersFreeCredits: 0,
  ...fields,
})

type Instance = 'a' | 'b' | 'c'
type Step = { by: Instance; subjects: BankSubjectRequest[] }

/**
 * The bank's semantics, one case a row: the state before (the exchanges that made it, by instances
 * a, b and c), an exchange, and the reply it gets. Time plays no part (no lease expires, no bucket
 * refills between steps that matter). Every case runs on the Redis script and the memory bank alike.
 */
const cases: { name: string; before: Step[]; step: Step; reply: BankReply }[] = [
  {
    name: "a day the bank has no state for, and no seed: it asks for the day's usage",
    before: [],
    step: { by: 'a', subjects: [ask({ leaseCredits: 80, leaseMinCredits: 80 })] },
    reply: { needsSeed: true },
  },
  {
    name: 'with the seed: a lease of a quarter of what is left, up to the most asked for',
    before: [],
    step: { by: 'a', subjects: [ask({ seedCredits: 100, leaseCredits: 10_000, leaseMinCredits: 80 })] },
    reply: { needsSeed: false, subjects: [answer({ leasedCredits: 225, grantedCredits: 325 })] },
  },
  {
    name: 'a lease is never more than maxLeaseCredits',
    before: [],
    step: {
      by: 'a',
      subjects: [ask({ seedCredits: 0, leaseCredits: 80, leaseMinCredits: 80, maxLeaseCredits: 100 })],
    },
    reply: { needsSeed: false, subjects: [answer({ leasedCredits: 100, grantedCredits: 100 })] },
  },
  {
    name: 'another instance holding a lease: the quarter is shared among the live holders (its lease counts as free there)',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 100, leaseCredits: 10_000, leaseMinCredits: 80 })] }],
    step: { by: 'b', subjects: [ask({ leaseCredits: 10_000, leaseMinCredits: 80 })] },
    reply: {
      needsSeed: false,
      subjects: [answer({ leasedCredits: 84, grantedCredits: 409, othersFreeCredits: 225 })],
    },
  },
  {
    name: 'never less than the least asked for, and never past the limit',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 900, leaseCredits: 60, leaseMinCredits: 60 })] }],
    step: { by: 'b', subjects: [ask({ leaseCredits: 80, leaseMinCredits: 80 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 960, othersFreeCredits: 60 })] },
  },
  {
    name: 'a report is absolute: sent twice, it counts once',
    before: [
      { by: 'a', subjects: [ask({ seedCredits: 0, leaseCredits: 400, leaseMinCredits: 80 })] },
      { by: 'a', subjects: [ask({ usedCredits: 160, heldCredits: 90 })] },
    ],
    step: { by: 'a', subjects: [ask({ usedCredits: 160, heldCredits: 90 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 250, heldCredits: 90 })] },
  },
  {
    name: 'credits an instance holds without a record in the bank: it keeps only what fits',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 700 })] }],
    step: { by: 'b', subjects: [ask({ heldCredits: 5_000 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 1_000, heldCredits: 300 })] },
  },
  {
    name: 'what the other live instances hold free is told; a lease granted counts as free',
    before: [
      {
        by: 'a',
        subjects: [ask({ seedCredits: 0, leaseCredits: 80, leaseMinCredits: 80, maxLeaseCredits: 80 })],
      },
      {
        by: 'b',
        subjects: [ask({ heldCredits: 0, leaseCredits: 40, leaseMinCredits: 40, maxLeaseCredits: 40 })],
      },
      { by: 'b', subjects: [ask({ usedCredits: 10, heldCredits: 30, freeCredits: 20 })] },
    ],
    step: { by: 'c', subjects: [ask()] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 120, othersFreeCredits: 100 })] },
  },
  {
    name: 'after a lease went back on request (the end of a balance), leases are what is asked for',
    before: [
      { by: 'a', subjects: [ask({ seedCredits: 0, leaseCredits: 10_000, leaseMinCredits: 80 })] },
      { by: 'a', subjects: [ask({ returning: true })] },
    ],
    step: { by: 'b', subjects: [ask({ leaseCredits: 90, leaseMinCredits: 80 })] },
    reply: { needsSeed: false, subjects: [answer({ leasedCredits: 90, grantedCredits: 90 })] },
  },
  {
    name: 'two subjects in one exchange: one without state and without a seed asks for the seed of all',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 0 })] }],
    step: { by: 'a', subjects: [ask(), ask({ subject: 'key:7' })] },
    reply: { needsSeed: true },
  },
  {
    name: 'two subjects in one exchange, each answered',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 0 })] }],
    step: {
      by: 'a',
      subjects: [
        ask({ leaseCredits: 80, leaseMinCredits: 80, maxLeaseCredits: 80 }),
        ask({ subject: 'key:7', dailyLimit: 100, seedCredits: 50, leaseCredits: 80, leaseMinCredits: 10 }),
      ],
    },
    reply: {
      needsSeed: false,
      subjects: [
        answer({ leasedCredits: 80, grantedCredits: 80 }),
        answer({ leasedCredits: 12, grantedCredits: 62 }),
      ],
    },
  },
  {
    name: "seeded with each instance's share: an instance's first report counts what it spent beyond it (flushed after the seed's read, or not)",
    before: [
      {
        by: 'a',
        subjects: [
          ask({ seedCredits: 300, seedInstances: { a: 100, b: 200 }, usedCredits: 100, flushedCredits: 100 }),
        ],
      },
    ],
    step: { by: 'b', subjects: [ask({ usedCredits: 250, flushedCredits: 250 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 350 })] },
  },
  {
    name: 'an instance without a share of the seed: what it wrote to the ledger counts as in the seed',
    before: [
      {
        by: 'a',
        subjects: [
          ask({ seedCredits: 300, seedInstances: { a: 300 }, usedCredits: 300, flushedCredits: 300 }),
        ],
      },
    ],
    step: { by: 'c', subjects: [ask({ usedCredits: 120, flushedCredits: 100 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 320 })] },
  },
  {
    name: 'a seed without shares (an older version sends none): what an instance wrote to the ledger counts as in the seed',
    before: [{ by: 'a', subjects: [ask({ seedCredits: 300 })] }],
    step: { by: 'c', subjects: [ask({ usedCredits: 120, flushedCredits: 100 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 320 })] },
  },
  {
    name: 'a share is counted until the instance reports: then its report',
    before: [
      { by: 'a', subjects: [ask({ seedCredits: 300, seedInstances: { b: 200 } })] },
      { by: 'b', subjects: [ask({ usedCredits: 250, flushedCredits: 250 })] },
    ],
    step: { by: 'b', subjects: [ask({ usedCredits: 280, flushedCredits: 280 })] },
    reply: { needsSeed: false, subjects: [answer({ grantedCredits: 380 })] },
  },
  {
    name: 'per second only (no daily limit): a slice of a full bucket',
    before: [],
    step: {
      by: 'a',
      subjects: [
        ask({
          dailyLimit: -1,
          creditsPerSecond: 800,
          rateCredits: 80,
          rateMinCredits: 80,
          rateSliceCredits: 200,
        }),
      ],
    },
    reply: { needsSeed: false, subjects: [answer({ rateGrantedCredits: 200 })] },
  },
  {
    name: 'a call dearer than a second of credits, on a full bucket: granted, into debt',
    before: [],
    step: {
      by: 'a',
      subjects: [
        ask({
          dailyLimit: -1,
          creditsPerSecond: 500,
          rateCredits: 1_000,
          rateMinCredits: 1_000,
          rateSliceCredits: 125,
        }),
      ],
    },
    reply: { needsSeed: false, subjects: [answer({ rateGrantedCredits: 1_000 })] },
  },
]

for (const [name, open] of Object.entries(backends)) {
  if (name === 'cluster') continue // the memory bank over a channel: the same bank
  describe(`the ${name} bank's semantics`, () => {
    for (const each of cases) {
      it(each.name, async (t) => {
        const backend = open(15_000)
        t.after(() => backend.close())
        const instances: Record<Instance, CreditBank> = {
          a: await backend.instance(),
          b: await backend.instance(),
          c: await backend.instance(),
        }
        // a seed's shares are written by instance (a, b, c): sent under each one's id in the bank
        const sent = ({ subjects }: Step) => ({
          subjects: subjects.map((subject) => {
            const shares = subject.seedInstances
            if (shares === undefined) return subject
            const seedInstances = Object.fromEntries(
              Object.entries(shares).map(([by, credits]) => [instances[by as Instance].instanceId, credits]),
            )
            return { ...subject, seedInstances }
          }),
        })
        for (const step of each.before) await instances[step.by].exchange(sent(step))
        assert.deepEqual(await instances[each.step.by].exchange(sent(each.step)), each.reply)
      })
    }
  })
}
