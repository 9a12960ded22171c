import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isAddressOrRange } from './isAddressOrRange.ts'

describe('isAddressOrRange', () => {
  it('takes addresses and CIDR ranges, nothing else', () => {
    for (const entry of ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '0.0.0.0/0'])
      assert.equal(isAddressOrRange(entry), true, entry)
    for (const entry of ['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0.0/8/1', '', '10.0.0/8'])
      assert.equal(isAddressOrRange(entry), false, entry)
  })
})
