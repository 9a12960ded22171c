import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CallsInFlightLimitError, LogResultsLimitError, RateLimitError } from '../errors/limitErrors.ts'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import { getMethodSpec } from './methodTable.ts'
import { priceOf } from './priceOf.ts'

const getLogs = getMethodSpec('eth_getLogs')
const failed = (error: unknown, httpStatus: number, clientGone = false) =>
  priceOf({ kind: 'failed', spec: getLogs, error, httpStatus, clientGone })

describe('priceOf', () => {
  it('a served call costs its method: the table row, or the default row for a method it does not name', () => {
    assert.equal(priceOf({ kind: 'served', spec: getLogs }), 255)
    assert.equal(priceOf({ kind: 'served', spec: getMethodSpec('eth_chainId') }), 5)
    assert.equal(priceOf({ kind: 'served', spec: getMethodSpec('no_suchMethod') }), 80)
  })

  it('a split eth_getLogs costs the method for each node call it took, however it ended', () => {
    assert.equal(priceOf({ kind: 'served', spec: getLogs, splitCalls: 9 }), 9 * 255)
    assert.equal(priceOf({ kind: 'served', spec: getLogs, splitCalls: 0 }), 255, 'not split')
    const failedAfter = (error: unknown, httpStatus: number, clientGone = false) =>
      priceOf({ kind: 'failed', spec: getLogs, error, httpStatus, clientGone, splitCalls: 4 })
    assert.equal(failedAfter(new LogResultsLimitError(10_000), 200), 4 * 255)
    assert.equal(failedAfter(new RateLimitError('planCreditsPerSecond', 500), 429), 4 * 255)
    assert.equal(failedAfter(new UpstreamTimeoutError(), 504), 4 * 255)
    assert.equal(failedAfter(new Error('the client went away'), 499, true), 4 * 255)
    const failedUnsplit = priceOf({
      kind: 'failed',
      spec: getLogs,
      error: new UpstreamTimeoutError(),
      httpStatus: 504,
      clientGone: false,
      splitCalls: 0,
    })
    assert.equal(failedUnsplit, 0, 'no node call of a split answered: as any call')
    const refusedBeforeAny = priceOf({
      kind: 'failed',
      spec: getLogs,
      error: new RateLimitError('planCreditsPerSecond', 500),
      httpStatus: 429,
      clientGone: false,
      splitCalls: 0,
    })
    assert.equal(refusedBeforeAny, 0, 'the rate refused its next chunk before any node call')
  })

  it('input refused before any work costs 5, a call or a whole request', () => {
    assert.equal(priceOf({ kind: 'refusedCall', reason: 'input' }), 5)
    for (const httpStatus of [200, 400, 403, 413, 415]) {
      assert.equal(priceOf({ kind: 'rejectedRequest', httpStatus }), 5, `${httpStatus}`)
    }
  })

  it('an id of a filter the key did not make costs nothing: no node is asked, nothing is learnt', () => {
    assert.equal(priceOf({ kind: 'refusedCall', reason: 'unknownFilter' }), 0)
  })

  it('a request refused whole by us (a busy server) or by the balance (402, 429) costs nothing', () => {
    for (const httpStatus of [402, 429, 500, 503]) {
      assert.equal(priceOf({ kind: 'rejectedRequest', httpStatus }), 0, `${httpStatus}`)
    }
  })

  it('a failed call: free when ours, upstream or the client left; params refused as refused input; else the method', () => {
    assert.equal(failed(new UpstreamTimeoutError(), 504), 0)
    assert.equal(failed(new Error('bug'), 500), 0)
    assert.equal(failed(new Error('the client went away'), 499, true), 0)
    assert.equal(failed(new InvalidParamsError('invalid argument 0: block range too large'), 200), 5)
    assert.equal(failed(new LogResultsLimitError(10_000), 200), 255)
  })

  it('a timeout a node worked through while answering others is the call’s own: its method’s price, though a 504', () => {
    assert.equal(failed(new UpstreamTimeoutError(undefined, true), 504), 255)
    assert.equal(
      failed(new UpstreamTimeoutError(undefined, false), 504),
      0,
      'the node or the gateway at fault',
    )
    assert.equal(failed(new UpstreamTimeoutError(undefined, true), 504, true), 0, 'the client left first')
  })

  it('a call its key’s calls in flight kept from the nodes until its deadline costs nothing (429)', () => {
    assert.equal(failed(new CallsInFlightLimitError(32), 429), 0)
  })

  it('the batch envelope: 80, paid only by a batch whose calls ran and cost credits', () => {
    assert.equal(priceOf({ kind: 'batchEnvelope', callsRan: true, callsCharged: true }), 80)
    assert.equal(priceOf({ kind: 'batchEnvelope', callsRan: false, callsCharged: true }), 0)
    assert.equal(priceOf({ kind: 'batchEnvelope', callsRan: true, callsCharged: false }), 0)
  })

  it('notifications by kind, and the Gas API', () => {
    assert.equal(priceOf({ kind: 'notification', subscription: 'newHeads' }), 50)
    assert.equal(priceOf({ kind: 'notification', subscription: 'logs' }), 300)
    assert.equal(priceOf({ kind: 'notification', subscription: 'newPendingTransactions' }), 200)
    assert.equal(priceOf({ kind: 'gasApi' }), 80)
  })
})
