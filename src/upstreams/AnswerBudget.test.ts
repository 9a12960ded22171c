import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ResponseTooLargeError, ServerBusyError } from '../errors/limitErrors.ts'
import { createAnswerMemory, smallMessageBytes } from './AnswerBudget.ts'

const mib = 1024 * 1024

describe('AnswerBudget', () => {
  it("a request's answers add up to its own bound: past it, response too large", () => {
    const memory = createAnswerMemory({ maxRequestBytes: 4 * mib, maxBytes: 64 * mib })
    const budget = memory.forRequest()
    assert.equal(budget.take(3 * mib), undefined)
    assert.ok(budget.take(mib + 1) instanceof ResponseTooLargeError)
    assert.equal(budget.take(mib), undefined, 'exactly to the bound')
    budget.giveBack(2 * mib)
    assert.equal(budget.take(2 * mib), undefined, 'what was given back can be taken again')
    assert.ok(
      memory.forRequest(mib).take(mib + 1) instanceof ResponseTooLargeError,
      'a lower bound of its own',
    )
  })

  it("the process's bound on large answers: past it, server busy; small answers always go", () => {
    const memory = createAnswerMemory({ maxRequestBytes: 32 * mib, maxBytes: 8 * mib })
    const first = memory.forRequest()
    assert.equal(first.take(6 * mib), undefined)
    assert.equal(memory.inUseBytes(), 6 * mib - smallMessageBytes, "each request's first bytes are free")
    const second = memory.forRequest()
    assert.ok(second.take(4 * mib) instanceof ServerBusyError)
    assert.equal(second.take(smallMessageBytes), undefined, 'a small answer goes though the bound is full')
    first.release()
    assert.equal(memory.inUseBytes(), 0)
    assert.equal(second.take(4 * mib), undefined)
    second.release()
    assert.equal(memory.inUseBytes(), 0, 'everything released')
  })

  it('a shared load holds on a budget of its own; a released budget takes nothing more', () => {
    const memory = createAnswerMemory({ maxRequestBytes: 32 * mib, maxBytes: 64 * mib })
    const request = memory.forRequest()
    const load = request.forShared()
    assert.equal(load.take(8 * mib), undefined)
    request.release()
    assert.equal(memory.inUseBytes(), 8 * mib - smallMessageBytes, 'the load outlives its first requester')
    load.release()
    assert.equal(memory.inUseBytes(), 0)
    assert.equal(load.take(8 * mib), undefined, 'a straggler after release is not refused')
    assert.equal(memory.inUseBytes(), 0, 'nor counted')
  })
})
