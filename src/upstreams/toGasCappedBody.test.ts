import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gasCapOf } from './nodeErrors.ts'
import { toGasCappedBody } from './toGasCappedBody.ts'

const call = (first: object) =>
  JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'eth_call', params: [first, 'latest'] })

describe('gas over a per-transaction cap (EIP-7825)', () => {
  it("reads the cap from geth's, Hardhat 3's and revm's refusals, and nothing from other errors", () => {
    assert.equal(
      gasCapOf({ code: -32000, message: 'transaction gas limit too high (cap: 16777216, tx: 30000000)' }),
      16_777_216n,
    )
    assert.equal(
      gasCapOf({
        code: -32000,
        message: 'Transaction gas limit is 30000000 and exceeds transaction gas cap of 16777216',
      }),
      16_777_216n,
    )
    assert.equal(
      gasCapOf({
        code: -32003,
        message: 'transaction gas limit (30000000) is greater than the cap (16777216)',
      }),
      16_777_216n,
    )
    assert.equal(gasCapOf({ code: -32000, message: 'intrinsic gas too low' }), undefined)
    assert.equal(gasCapOf({ code: 3, message: 'execution reverted' }), undefined)
    assert.equal(gasCapOf({ code: -32000 }), undefined)
  })

  it('writes the call with its gas at the cap, saying whether it had none', () => {
    assert.deepEqual(toGasCappedBody(call({ to: '0x1' }), 16_777_216n), {
      body: call({ to: '0x1', gas: '0x1000000' }),
      filled: true,
    })
    assert.deepEqual(toGasCappedBody(Buffer.from(call({ to: '0x1', gas: '0x1c9c380' })), 16_777_216n), {
      body: call({ to: '0x1', gas: '0x1000000' }),
      filled: false,
    })
  })

  it('leaves alone gas within the cap, and bodies that are not a call', () => {
    assert.equal(toGasCappedBody(call({ to: '0x1', gas: '0x1000000' }), 16_777_216n), undefined)
    assert.equal(toGasCappedBody('not json', 1n), undefined)
    assert.equal(toGasCappedBody(JSON.stringify({ method: 'eth_call', params: ['0x1'] }), 1n), undefined)
  })
})
