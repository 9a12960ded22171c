import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { getMethodSpec } from '../methods/methodTable.ts'
import { byBlockHash } from './byBlockHash.ts'

const hash = `0x${'ab'.repeat(32)}`
const call = { to: `0x${'01'.repeat(20)}` }

describe('byBlockHash', () => {
  it('a block reference becomes an EIP-1898 {blockHash}; the other params stay', () => {
    assert.deepEqual(byBlockHash(getMethodSpec('eth_call'), [call, '0x10'], hash), [
      call,
      { blockHash: hash },
    ])
    const overrides = { [call.to]: { balance: '0x1' } }
    assert.deepEqual(byBlockHash(getMethodSpec('eth_call'), [call, '0x10', overrides], hash), [
      call,
      { blockHash: hash },
      overrides,
    ])
    assert.deepEqual(byBlockHash(getMethodSpec('eth_getBalance'), [call.to, '0x10'], hash), [
      call.to,
      { blockHash: hash },
    ])
  })

  it('eth_getBlockReceipts takes the hash itself; by-number methods that take none are left as they are', () => {
    assert.deepEqual(byBlockHash(getMethodSpec('eth_getBlockReceipts'), ['0x10'], hash), [hash])
    assert.equal(byBlockHash(getMethodSpec('eth_getBlockByNumber'), ['0x10', false], hash), undefined)
    assert.equal(
      byBlockHash(getMethodSpec('eth_getLogs'), [{ fromBlock: '0x1', toBlock: '0x10' }], hash),
      undefined,
    )
  })
})
