import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ResponseTooLargeError, ServerBusyError } from '../errors/limitErrors.ts'
import { createAnswerMemory, smallMessageBytes } from './AnswerBudget.ts'

const mib = 1024 * 1024

describe('AnswerBudget', () => {
  it("a request's answers add up to its own bound: past it, response too large", () => {
    const memory = createAnswerMemory({ maxRequestBytes: 4 * mib, maxBytes: 64 * mib, shareBytes: 64 * mib })
    const budget = memory.forRequest([])
    assert.equal(budget.take(3 * mib), undefined)
    assert.ok(budget.take(mib + 1) instanceof ResponseTooLargeError)
    assert.equal(budget.take(mib), undefined, 'exactly to the bound')
    budget.giveBack(2 * mib)
    assert.equal(budget.take(2 * mib), undefined, 'what was given back can be taken again')
    assert.ok(
      memory.forRequest([], mib).take(mib + 1) instanceof ResponseTooLargeError,
      'a lower bound of its own',
    )
  })

  it("the process's bound on large answers: past it, server busy; small answers always go", () => {
    const memory = createAnswerMemory({ maxRequestBytes: 32 * mib, maxBytes: 8 * mib, shareBytes: 8 * mib })
    const first = memory.forRequest([])
    assert.equal(first.take(6 * mib), undefined)
    assert.equal(memory.inUseBytes(), 6 * mib - smallMessageBytes, "each request's first bytes are free")
    const second = memory.forRequest([])
    assert.ok(second.take(4 * mib) instanceof ServerBusyError)
    assert.equal(second.take(smallMessageBytes), undefined, 'a small answer goes though the bound is full')
    first.release()
    assert.equal(memory.inUseBytes(), 0)
    assert.equal(second.take(4 * mib), undefined)
    second.release()
    assert.equal(memory.inUseBytes(), 0, 'everything released')
  })

  it('a shared load holds on a budget of its own; a released budget takes nothing more', () => {
    const memory = createAnswerMemory({ maxRequestBytes: 32 * mib, maxBytes: 64 * mib, shareBytes: 64 * mib })
    const request = memory.forRequest([])
    const load = request.forShared()
    assert.equal(load.take(8 * mib), undefined)
    request.release()
    assert.equal(memory.inUseBytes(), 8 * mib - smallMessageBytes, 'the load outlives its first requester')
    load.release()
    assert.equal(memory.inUseBytes(), 0)
    assert.equal(load.take(8 * mib), undefined, 'a straggler after release is not refused')
    assert.equal(memory.inUseBytes(), 0, 'nor counted')
  })

  it("one key's answers, and one address's, hold at most their share: others still get theirs", () => {
    const memory = createAnswerMemory({ maxRequestBytes: 32 * mib, maxBytes: 64 * mib, shareBytes: 16 * mib })
    const greedy = memory.forRequest(['key:a', 'address:1'])
    assert.equal(
      greedy.take(smallMessageBytes + 16 * mib),
      undefined,
      "its first bytes are free, the rest fills its key's share",
    )
    const again = memory.forRequest(['key:a', 'address:2'])
    assert.equal(again.take(smallMessageBytes), undefined, 'a small answer goes though its share is full')
    assert.ok(again.take(1) instanceof ServerBusyError, "past key a's share, though the process has room")
    // other keys' calls may join a shared load: none of them is refused for key a's share
    const load = greedy.forShared()
    assert.equal(load.take(smallMessageBytes + mib), undefined, 'a shared load begun by key a is in no share')
    assert.equal(memory.inUseBytes(), 17 * mib, 'though in the whole bound')
    const sameAddress = memory.forRequest(['key:b', 'address:1'])
    assert.ok(sameAddress.take(2 * mib) instanceof ServerBusyError, "address 1's share is full too")
    const other = memory.forRequest(['key:c', 'address:3'])
    assert.equal(other.take(16 * mib), undefined, 'another key from another address gets its share')
    greedy.release()
    assert.equal(again.take(mib), undefined, "what key a gave back, key a's requests take again")
    for (const budget of [again, load, sameAddress, other]) budget.release()
    assert.equal(memory.inUseBytes(), 0)
  })
})
