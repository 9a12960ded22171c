import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Cancellation } from './Cancellation.ts'

describe('Cancellation', () => {
  it('calls each subscribed listener once, and late subscribers at once', () => {
    const cancellation = new Cancellation()
    const calls: string[] = []
    cancellation.onCancel(() => calls.push('a'))
    const unsubscribe = cancellation.onCancel(() => calls.push('b'))
    unsubscribe()
    cancellation.cancel()
    cancellation.cancel()
    cancellation.onCancel(() => calls.push('late'))
    assert.deepEqual(calls, ['a', 'late'])
    assert.equal(cancellation.cancelled, true)
  })

  it('keeps every listener of a request with hedges: first, more, unsubscribed in any order', () => {
    const cancellation = new Cancellation()
    const calls: string[] = []
    const unsubscribeA = cancellation.onCancel(() => calls.push('a'))
    cancellation.onCancel(() => calls.push('b'))
    const unsubscribeC = cancellation.onCancel(() => calls.push('c'))
    unsubscribeA()
    unsubscribeC()
    // a listener after the first left is still called
    cancellation.onCancel(() => calls.push('d'))
    // unsubscribing twice, or after another took the slot, removes nothing else
    unsubscribeA()
    cancellation.cancel()
    assert.deepEqual(calls.sort(), ['b', 'd'])
  })
})
