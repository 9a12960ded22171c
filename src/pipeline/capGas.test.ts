import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { capGas } from './capGas.ts'

const head = { number: 1n, gasLimit: 30_000_000n }
const uncapped = { maxTransactionGas: undefined, fillsTransactionGas: false }
/** EIP-7825's cap, 2^24. */
const osaka = { maxTransactionGas: 16_777_216n, fillsTransactionGas: false }

describe('capGas', () => {
  it('lowers gas above 10x the block gas limit to the cap, without touching the input', () => {
    const params = [{ to: '0x1', gas: '0x11e1a3001' }, 'latest']
    assert.deepEqual(capGas(params, head, uncapped), [{ to: '0x1', gas: '0x11e1a300' }, 'latest'])
    assert.equal((params[0] as { gas: string }).gas, '0x11e1a3001')
  })

  it('leaves gas at or under the cap, and calls without gas, as they are', () => {
    const atCap = [{ gas: '0x11e1a300' }, 'latest']
    assert.equal(capGas(atCap, head, uncapped), atCap)
    const noGas = [{ to: '0x1' }]
    assert.equal(capGas(noGas, head, uncapped), noGas)
    assert.equal(capGas(noGas, head, osaka), noGas, 'a cap alone does not add gas')
  })

  it("lowers gas to the network's per-transaction cap where that is under 10x the block gas limit", () => {
    assert.deepEqual(capGas([{ gas: '0x1000001' }], head, osaka), [{ gas: '0x1000000' }])
    const under = [{ gas: '0x1000000' }]
    assert.equal(capGas(under, head, osaka), under)
    // a cap above 10x the block gas limit: the tenfold cap
    const high = { maxTransactionGas: 10n ** 12n, fillsTransactionGas: false }
    assert.deepEqual(capGas([{ gas: '0x11e1a3001' }], head, high), [{ gas: '0x11e1a300' }])
  })

  it("sends a call without gas with the cap once the network's nodes refused their own default", () => {
    const fills = { maxTransactionGas: 16_777_216n, fillsTransactionGas: true }
    assert.deepEqual(capGas([{ to: '0x1' }, 'latest'], head, fills), [
      { to: '0x1', gas: '0x1000000' },
      'latest',
    ])
    const explicit = [{ to: '0x1', gas: '0x5208' }]
    assert.equal(capGas(explicit, head, fills), explicit)
  })
})
