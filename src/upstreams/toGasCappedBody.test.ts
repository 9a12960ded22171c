import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gasCapOf, minGasCap } from './gasCapOf.ts'
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
    assert.equal(
      gasCapOf({
        code: -32000,
        message: 'err: transaction gas limit too high (cap: 16777216, tx: 30000000) (supplied gas 30000000)',
      }),
      16_777_216n,
      "geth's eth_call wraps it",
    )
    // Hardhat 3.18's answer to an eth_call with gas one past the cap, as it writes it
    const hardhat = JSON.parse(
      '{"code":-32000,"message":"transaction gas limit (16777217) is greater than the cap (16777216)","data":{"message":"transaction gas limit (16777217) is greater than the cap (16777216)","data":null}}',
    )
    assert.equal(gasCapOf(hardhat), 16_777_216n)
    assert.equal(gasCapOf({ code: -32000, message: 'intrinsic gas too low' }), undefined)
    assert.equal(gasCapOf({ code: 3, message: 'execution reverted' }), undefined)
    assert.equal(gasCapOf({ code: -32000 }), undefined)
  })

  it('reads nothing from a revert, whatever its reason says: its author is any contract', () => {
    for (const error of [
      { code: 3, message: 'execution reverted: transaction gas limit too high (cap: 21000, tx: 1)' },
      { code: 3, message: 'transaction gas limit too high (cap: 16777216, tx: 30000000)' },
      {
        code: -32000,
        message: 'execution reverted: transaction gas limit (30000000) is greater than the cap (16777216)',
      },
      {
        code: -32603,
        message:
          "VM Exception while processing transaction: reverted with reason string 'transaction gas limit too high (cap: 16777216, tx: 30000000)'",
      },
    ]) {
      assert.equal(gasCapOf(error), undefined, error.message)
    }
  })

  it("reads a node's wording only from the start of its message, and with that node's code", () => {
    assert.equal(
      gasCapOf({
        code: -32000,
        message: 'oops: transaction gas limit too high (cap: 16777216, tx: 30000000)',
      }),
      undefined,
    )
    assert.equal(
      gasCapOf({ code: -32602, message: 'transaction gas limit too high (cap: 16777216, tx: 30000000)' }),
      undefined,
    )
    assert.equal(
      gasCapOf({ code: -32000, message: 'TRANSACTION GAS LIMIT TOO HIGH (cap: 16777216, tx: 30000000)' }),
      undefined,
    )
  })

  it('takes only a cap below the gas the refusal quotes, and not below 2^20', () => {
    const geth = (cap: bigint, tx: bigint) =>
      gasCapOf({ code: -32000, message: `transaction gas limit too high (cap: ${cap}, tx: ${tx})` })
    assert.equal(geth(16_777_216n, 16_777_216n), undefined, 'a cap the gas is not over')
    assert.equal(geth(30_000_000n, 16_777_217n), undefined, 'a cap above the gas')
    assert.equal(geth(21_000n, 30_000_000n), undefined, 'a tiny cap')
    assert.equal(geth(minGasCap - 1n, 30_000_000n), undefined)
    assert.equal(geth(minGasCap, 30_000_000n), minGasCap, 'the floor itself')
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
