import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { getMethodSpec } from '../methods/methodTable.ts'
import { parseParams } from '../methods/params.ts'
import { pinnedBlock } from './pinnedBlock.ts'

const blockHash = `0x${'ab'.repeat(32)}`
const finalized = 90n

/** The pin of a call as the pipeline works it out: its params validated and normalised first. */
function pinOf(method: string, params: unknown[]) {
  const spec = getMethodSpec(method)
  return pinnedBlock(spec, parseParams(spec.params, params), finalized)
}

describe('pinnedBlock', () => {
  it('the default: a method not routed by block, or a call at latest, is not pinned', () => {
    assert.equal(pinnedBlock(getMethodSpec('eth_unknownMethod'), ['0x5'], finalized), undefined)
    assert.equal(pinOf('eth_chainId', []), undefined)
    assert.equal(pinOf('eth_getBalance', [`0x${'00'.repeat(20)}`, 'latest']), undefined)
    assert.equal(pinOf('eth_getLogs', [{}]), undefined)
    assert.equal(pinOf('eth_feeHistory', ['0x10', 'latest', []]), undefined)
  })

  it('one block: by number, tag or hash', () => {
    assert.equal(pinOf('eth_getBalance', [`0x${'00'.repeat(20)}`, '0x2a']), 42n)
    assert.equal(pinOf('eth_getBlockByNumber', ['earliest', false]), 0n)
    assert.equal(pinOf('eth_getBlockByNumber', ['safe', false]), finalized)
    assert.equal(pinOf('eth_getBlockByHash', [blockHash, false]), 'hash')
    assert.equal(pinOf('eth_call', [{ to: `0x${'00'.repeat(20)}` }, { blockHash }]), 'hash')
  })

  it('eth_getLogs: its range, from its first block to its last; one end where the other is not a number', () => {
    assert.deepEqual(pinOf('eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x28' }]), { from: 2n, to: 40n })
    assert.deepEqual(pinOf('eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'finalized' }]), {
      from: 0n,
      to: finalized,
    })
    assert.equal(pinOf('eth_getLogs', [{ fromBlock: '0x7', toBlock: '0x7' }]), 7n)
    assert.equal(pinOf('eth_getLogs', [{ fromBlock: '0x2' }]), 2n, 'to latest: its first block')
    assert.equal(pinOf('eth_getLogs', [{ fromBlock: '0x2', toBlock: 'latest' }]), 2n)
    assert.equal(pinOf('eth_getLogs', [{ toBlock: '0x28' }]), 40n, 'from latest: its last block')
    assert.equal(pinOf('eth_getLogs', [{ fromBlock: '0x9', toBlock: '0x3' }]), 3n, 'an empty range')
    assert.equal(pinOf('eth_getLogs', [{ blockHash }]), 'hash')
  })

  it('eth_feeHistory: blockCount blocks up to its newest, not below block 0', () => {
    assert.deepEqual(pinOf('eth_feeHistory', ['0x1e', '0x23', []]), { from: 6n, to: 35n })
    assert.deepEqual(pinOf('eth_feeHistory', [30, '0x23']), { from: 6n, to: 35n })
    assert.deepEqual(pinOf('eth_feeHistory', ['30', 'finalized']), { from: 61n, to: finalized })
    assert.deepEqual(pinOf('eth_feeHistory', ['0x400', '0x23', []]), { from: 0n, to: 35n })
    assert.equal(pinOf('eth_feeHistory', ['0x1', '0x23', []]), 35n)
    assert.equal(pinOf('eth_feeHistory', ['0x0', '0x23', []]), 35n)
  })
})
