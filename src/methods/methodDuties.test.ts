import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { methodDuties } from './methodDuties.ts'
import { fieldSteps, getMethodSpec, getOfferedMethods, type MethodSpec } from './methodTable.ts'

const dutiesOf = (method: string) => getMethodSpec(method).duties
/** The default row, as a method the table does not name gets it. */
const { duties: _, ...defaults } = getMethodSpec('no_suchMethod')

describe('methodDuties', () => {
  it('every field of a spec is read by a named step (a new flag must be given its steps)', () => {
    const fields = Object.keys(getMethodSpec('eth_call')).filter((field) => field !== 'duties')
    assert.deepEqual(fields.sort(), Object.keys(fieldSteps).sort())
    for (const steps of Object.values(fieldSteps)) assert.ok(steps.length > 0)
  })

  it('refuses a field it does not know, rather than let it skip a duty', () => {
    const withNewFlag = { ...defaults, newFlag: true } as Omit<MethodSpec, 'duties'>
    assert.throws(() => methodDuties(withNewFlag, defaults, fieldSteps), /newFlag is read by no step/)
  })

  it('a flag away from the default row gives a method the duty of each step that reads it', () => {
    assert.deepEqual(methodDuties(defaults, defaults, fieldSteps), {
      answerHere: false,
      beforeSend: false,
      afterAnswer: false,
    })
    for (const [field, steps] of Object.entries(fieldSteps)) {
      if (!steps.some((step) => step === 'answerHere' || step === 'beforeSend' || step === 'afterAnswer'))
        continue
      const duties = methodDuties({ ...defaults, [field]: Symbol(field) }, defaults, fieldSteps)
      for (const step of steps)
        if (step in duties) assert.equal(duties[step as keyof typeof duties], true, field)
    }
  })

  it('the table: answered here, made ready to send, read after the answer, or none of them', () => {
    assert.deepEqual(dutiesOf('eth_accounts'), { answerHere: true, beforeSend: false, afterAnswer: false })
    assert.deepEqual(dutiesOf('eth_subscribe'), { answerHere: true, beforeSend: false, afterAnswer: false })
    assert.deepEqual(dutiesOf('eth_call'), { answerHere: false, beforeSend: true, afterAnswer: false })
    assert.deepEqual(dutiesOf('eth_getLogs'), { answerHere: false, beforeSend: true, afterAnswer: false })
    assert.deepEqual(dutiesOf('eth_getFilterChanges'), {
      answerHere: false,
      beforeSend: true,
      afterAnswer: true,
    })
    assert.deepEqual(dutiesOf('eth_blockNumber'), { answerHere: false, beforeSend: false, afterAnswer: true })
    assert.deepEqual(dutiesOf('eth_getTransactionReceipt'), {
      answerHere: false,
      beforeSend: false,
      afterAnswer: true,
    })
    assert.deepEqual(dutiesOf('eth_chainId'), { answerHere: false, beforeSend: false, afterAnswer: false })
    assert.deepEqual(dutiesOf('no_suchMethod'), { answerHere: false, beforeSend: false, afterAnswer: false })
  })

  it('every method with a duty flag set has that duty', () => {
    for (const method of getOfferedMethods()) {
      const spec = getMethodSpec(method)
      const { duties } = spec
      assert.equal(duties.answerHere, spec.localResult !== undefined || spec.subscriptionOnly, method)
      const beforeSend = spec.filterRole !== undefined || spec.capsGas || spec.boundsBlockRange
      assert.equal(duties.beforeSend, beforeSend, method)
      const afterAnswer = spec.filterRole !== undefined || spec.monotonicHead || spec.nullWhenNotFound
      assert.equal(duties.afterAnswer, afterAnswer, method)
    }
  })
})
