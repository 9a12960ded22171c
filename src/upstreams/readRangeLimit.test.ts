import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rangeRefusals } from '../../test/helpers/rangeRefusals.ts'
import { findNodeErrorRule } from './nodeErrors.ts'
import { readRangeLimit } from './readRangeLimit.ts'

describe('readRangeLimit', () => {
  it('reads no width from a refusal that states none (the range is halved)', () => {
    assert.deepEqual(readRangeLimit('Block range limit exceeded.'), {})
    assert.deepEqual(readRangeLimit('Requested range exceeds maximum RPC range limit'), {})
    assert.deepEqual(readRangeLimit('response too large'), { bySize: true })
    assert.deepEqual(readRangeLimit(''), {})
  })

  it("tells a refusal of the answer's size (results, logs, bytes) from one of the range", () => {
    for (const message of [
      'query returned more than 10000 results. Try with this block range [0x1, 0x2].',
      'query exceeds max results 20000, retry with the range 1-2',
      'Log response size exceeded.',
      'query returns too many logs, narrow your filter: 10000',
      'backend response too large',
      'logs matched by query exceeds limit of 10000',
      'response size should not greater than 10000000 bytes',
    ]) {
      assert.equal(readRangeLimit(message).bySize, true, message)
    }
    for (const message of [
      'eth_getLogs is limited to a 10,000 range',
      'ranges over 1000 blocks are not supported on freetier',
      'Block range limit exceeded.',
      'exceed maximum block range: 50000',
    ]) {
      assert.equal(readRangeLimit(message).bySize, undefined, message)
    }
  })

  for (const vendor of rangeRefusals) {
    it(`${vendor.vendor}: a range refusal, and the width it states`, () => {
      const error = vendor.refusal(100n, 2099n, 500n)
      assert.equal(findNodeErrorRule(error)?.splitsRange, true, error.message)
      const read = readRangeLimit(error.message)
      if (vendor.stated === 'limit') assert.equal(read.limitBlocks, 500n, error.message)
      else if (vendor.stated === 'suggested') {
        assert.ok(read.suggestedBlocks !== undefined && read.suggestedBlocks <= 1000n, error.message)
      } else assert.equal(read.limitBlocks ?? read.suggestedBlocks, undefined, error.message)
    })
  }

  it("Alchemy's 2K, its suggested range beside it, and numbers grouped by commas", () => {
    assert.deepEqual(
      readRangeLimit(
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0xc5dc00, 0xc614a7]',
      ),
      { suggestedBlocks: 0xc614a7n - 0xc5dc00n + 1n, limitBlocks: 2000n, bySize: true },
    )
    assert.deepEqual(readRangeLimit('eth_getLogs and eth_newFilter are limited to a 10,000 blocks range'), {
      limitBlocks: 10_000n,
    })
    assert.deepEqual(readRangeLimit('eth_getLogs is limited to 0 - 50 blocks range'), { limitBlocks: 50n })
    assert.deepEqual(readRangeLimit('block range is too wide (maximum 1024)'), { limitBlocks: 1024n })
    assert.deepEqual(
      readRangeLimit(
        'block range is larger than max block range, block range = 5120, max block range = 5000',
      ),
      { limitBlocks: 5000n },
    )
    for (const message of ['block range is bigger than maxBlockRange', 'block range too high']) {
      assert.equal(findNodeErrorRule({ code: -32000, message })?.splitsRange, true, message)
    }
  })

  it("reads the width a range refusal's limit words give, never a size refusal's count of results or bytes", () => {
    assert.deepEqual(readRangeLimit('block range greater than 1000 max'), { limitBlocks: 1000n })
    assert.deepEqual(readRangeLimit('Block range limit of 2,000 reached'), { limitBlocks: 2000n })
    assert.deepEqual(readRangeLimit('block range 5000 exceeds max 1000'), { limitBlocks: 1000n })
    assert.deepEqual(readRangeLimit('the block range may be at most 500 blocks'), { limitBlocks: 500n })
    assert.deepEqual(readRangeLimit('requested block range exceeds the configured maximum'), {})
    assert.deepEqual(readRangeLimit('response size exceeds the limit of 10 MB'), { bySize: true })
    assert.deepEqual(readRangeLimit('query would return more than 10000 results'), { bySize: true })
  })

  it('a suggested range written backwards, or a zero width, is not read', () => {
    assert.deepEqual(readRangeLimit('Try with this block range [0x10, 0x2].'), {})
    assert.deepEqual(readRangeLimit('ranges over 0 blocks are not supported on freetier'), {})
  })
})
