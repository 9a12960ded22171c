import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { capGas } from './capGas.ts'

const head = { number: 1n, gasLimit: 30_000_000n }

describe('capGas', () => {
  it('lowers gas above 10x the block gas limit to the cap, without touching the input', () => {
    const params = [{ to: '0x1', gas: '0x11e1a3001' }, 'latest']
    assert.deepEqual(capGas(params, head), [{ to: '0x1', gas: '0x11e1a300' }, 'latest'])
    assert.equal((params[0] as { gas: string }).gas, '0x11e1a3001')
  })

  it('leaves gas at or under the cap, and calls without gas, as they are', () => {
    const atCap = [{ gas: '0x11e1a300' }, 'latest']
    assert.equal(capGas(atCap, head), atCap)
    const noGas = [{ to: '0x1' }]
    assert.equal(capGas(noGas, head), noGas)
  })
})
