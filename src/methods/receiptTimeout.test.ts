import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidParamsError, ParamLimitError } from '../errors/rpcErrors.ts'
import { getMethodSpec } from './methodTable.ts'
import { parseParams } from './params.ts'
import { receiptTimeout, receiptWaitMs } from './receiptTimeout.ts'

const signed = '0x02f86c827a6980843b9aca00'
const formWhy =
  'invalid argument 1: expected a timeout in milliseconds: a non-negative integer or a 0x-prefixed hex quantity'

describe('eth_sendRawTransactionSync and its timeout (docs/compatibility.md §2, §7)', () => {
  it('milliseconds as a number, or a hex quantity sent on as a number', () => {
    for (const [given, sent] of [
      [0, 0],
      [1, 1],
      [2_000, 2_000],
      [60_000, 60_000],
      ['0x0', 0],
      ['0x7d0', 2_000],
      ['0x7D0', 2_000],
      ['0xea60', 60_000],
    ] as const) {
      assert.equal(receiptTimeout(given, 1), sent, JSON.stringify(given))
    }
  })

  it('anything else is refused with -32602, naming the forms', () => {
    for (const value of [-1, 1.5, Number.NaN, '2000', '0x', '0x07d0', 'soon', ' 0x1', true, {}, [1000]]) {
      assert.throws(
        () => receiptTimeout(value, 1),
        (err: unknown) => err instanceof InvalidParamsError && err.message === formWhy,
        JSON.stringify(value),
      )
    }
  })

  it("past 60 s (geth's and erigon's longest wait) it is refused, the limit named: never lowered silently", () => {
    for (const value of [60_001, 2 ** 53, 1e20, '0xea61', `0x${'f'.repeat(64)}`, `0x1${'0'.repeat(400)}`]) {
      assert.throws(
        () => receiptTimeout(value, 1),
        (err: unknown) =>
          err instanceof ParamLimitError &&
          err.message === 'invalid argument 1: timeout too large, the limit is 60000 ms',
        String(value),
      )
    }
  })

  it("the method's params: the signed transaction as eth_sendRawTransaction's, the timeout optional", () => {
    const { params } = getMethodSpec('eth_sendRawTransactionSync')
    assert.deepEqual(parseParams(params, [signed]), [signed])
    assert.deepEqual(parseParams(params, [signed, null]), [signed], 'a null timeout is left out, as none')
    assert.deepEqual(parseParams(params, [signed, '0x1f4']), [signed, 500])
    assert.throws(() => parseParams(params, []), /invalid argument 0: missing value for required argument/)
    assert.throws(
      () => parseParams(params, ['0x123', 500]),
      /invalid argument 0: expected 0x-prefixed hex data/,
    )
    assert.throws(() => parseParams(params, [signed, 500, 1]), /too many arguments, want at most 2/)
  })

  it("the method's row: eth_sendRawTransaction's duties, and the price of a send plus a receipt", () => {
    const sync = getMethodSpec('eth_sendRawTransactionSync')
    const send = getMethodSpec('eth_sendRawTransaction')
    assert.equal(sync.costCredits, send.costCredits + getMethodSpec('eth_getTransactionReceipt').costCredits)
    assert.equal(sync.costCredits, 160)
    for (const field of [
      'idempotent',
      'sendsTransaction',
      'failoverEligible',
      'cacheClass',
      'contracts',
    ] as const) {
      assert.equal(sync[field], send[field], field)
    }
    assert.equal(sync.waitsForReceipt, true)
    assert.equal(send.waitsForReceipt, false)
  })

  it("the node's wait: the timeout given, or the longest allowed where it is the node's default (0, none)", () => {
    assert.equal(receiptWaitMs(2_000), 2_000)
    assert.equal(receiptWaitMs(0), 60_000)
    assert.equal(receiptWaitMs(undefined), 60_000)
  })
})
