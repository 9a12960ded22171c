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
})
