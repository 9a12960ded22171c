import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatGwei } from './formatGwei.ts'

describe('formatGwei', () => {
  it('whole Gwei have no decimal point; zeros of the whole part stay', () => {
    assert.equal(formatGwei(0n), '0')
    assert.equal(formatGwei(1_000_000_000n), '1')
    assert.equal(formatGwei(10_000_000_000n), '10')
    assert.equal(formatGwei(1_000_000_000_000n), '1000')
  })

  it('below 1 Gwei: a leading 0, the fraction padded to 9 places before its trailing zeros go', () => {
    assert.equal(formatGwei(1n), '0.000000001')
    assert.equal(formatGwei(10n), '0.00000001')
    assert.equal(formatGwei(120_000_000n), '0.12')
    assert.equal(formatGwei(999_999_999n), '0.999999999')
  })

  it('up to 9 decimals, trailing zeros dropped, zeros inside the fraction kept', () => {
    assert.equal(formatGwei(23_227_829_059n), '23.227829059')
    assert.equal(formatGwei(1_500_000_000n), '1.5')
    assert.equal(formatGwei(100_000_000_010n), '100.00000001')
    assert.equal(formatGwei(2_050_000_000n), '2.05')
  })

  it('values far beyond 2^53 keep every digit', () => {
    const wei = 2n ** 256n - 1n
    const digits = '115792089237316195423570985008687907853269984665640564039457584007913129639935'
    assert.equal(wei.toString(), digits)
    assert.equal(formatGwei(wei), `${digits.slice(0, -9)}.${digits.slice(-9)}`)
    assert.equal(formatGwei(2n ** 64n * 1_000_000_000n), '18446744073709551616')
  })

  it('negative values carry one leading minus', () => {
    assert.equal(formatGwei(-1_500_000_000n), '-1.5')
    assert.equal(formatGwei(-1n), '-0.000000001')
    assert.equal(formatGwei(-3_000_000_000n), '-3')
  })
})
