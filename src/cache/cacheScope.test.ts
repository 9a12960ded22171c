import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { getMethodSpec, type MethodSpec } from '../methods/methodTable.ts'
import { parseParams } from '../methods/params.ts'
import { type CacheScope, cacheScope } from './cacheScope.ts'

const blockHash = `0x${'ab'.repeat(32)}`
const txHash = `0x${'cd'.repeat(32)}`
const addr = `0x${'ef'.repeat(20)}`
const finalized = 100n

/**
 * The scope of a call as the pipeline computes it: the method's row, its params in normal form, the
 * finalized block (100, or `unknown`).
 */
function scopeOf(
  method: string,
  params: unknown[],
  finalizedBlock: bigint | 'unknown' = finalized,
): CacheScope {
  return scopeWith(getMethodSpec(method), params, finalizedBlock === 'unknown' ? undefined : finalizedBlock)
}

function scopeWith(spec: MethodSpec, params: unknown[], finalizedBlock: bigint | undefined): CacheScope {
  return cacheScope(spec, parseParams(spec.params, params), finalizedBlock)
}

describe('cacheScope', () => {
  it('methods naming a block by hash are immutable', () => {
    assert.equal(scopeOf('eth_getBlockByHash', [blockHash, false]), 'immutable')
    assert.equal(scopeOf('eth_getBlockByHash', [blockHash, true], 'unknown'), 'immutable')
    assert.equal(scopeOf('eth_getTransactionByBlockHashAndIndex', [blockHash, '0x0']), 'immutable')
    assert.equal(scopeOf('eth_getBlockTransactionCountByHash', [blockHash]), 'immutable')
    assert.equal(scopeOf('eth_getUncleCountByBlockHash', [blockHash]), 'immutable')
    assert.equal(scopeOf('eth_getUncleByBlockHashAndIndex', [blockHash, '0x1']), 'immutable')
  })

  it('the chain id is immutable; the head and gas price last until the next block; transactions by hash by their block', () => {
    assert.equal(scopeOf('eth_chainId', []), 'immutable')
    assert.equal(scopeOf('net_version', [], 'unknown'), 'immutable')
    assert.equal(scopeOf('eth_blockNumber', []), 'head')
    assert.equal(scopeOf('eth_gasPrice', []), 'head')
    assert.equal(scopeOf('eth_maxPriorityFeePerGas', []), 'head')
    // a transaction found by hash may still move (reorg) or appear: kept by the block its answer names
    assert.equal(scopeOf('eth_getTransactionByHash', [txHash]), 'mined')
    assert.equal(scopeOf('eth_getTransactionReceipt', [txHash]), 'mined')
  })

  it('methods with cache class never are never kept, whatever their params', () => {
    assert.equal(scopeOf('eth_sendRawTransaction', ['0x02f8']), 'never')
    assert.equal(scopeOf('eth_estimateGas', [{ to: addr }]), 'never')
    assert.equal(scopeOf('eth_estimateGas', [{ to: addr }, blockHash]), 'never')
    assert.equal(scopeOf('eth_newFilter', [{ fromBlock: '0x1', toBlock: '0x2' }]), 'never')
    assert.equal(scopeOf('debug_traceTransaction', [txHash]), 'never')
    // a method the table does not name gets the default row
    assert.equal(cacheScope(getMethodSpec('eth_unknownMethod'), [], finalized), 'never')
  })

  describe('eth_getBlockByNumber', () => {
    it('a number at or below the finalized block is immutable, above it kept by its block', () => {
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x0', false]), 'immutable')
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x63', false]), 'immutable')
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x64', true]), 'immutable')
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x65', false]), 'block')
      assert.equal(scopeOf('eth_getBlockByNumber', ['0xffffffffffffffff', false]), 'block')
      // upper-case hex is the same number
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x5A', false]), 'immutable')
    })

    it('with the finalized block unknown a number is kept by its block', () => {
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x0', false], 'unknown'), 'block')
      assert.equal(scopeOf('eth_getBlockByNumber', ['0x1', false], 'unknown'), 'block')
    })

    it('earliest is immutable, latest, safe and finalized head, pending never', () => {
      assert.equal(scopeOf('eth_getBlockByNumber', ['earliest', false]), 'immutable')
      assert.equal(scopeOf('eth_getBlockByNumber', ['earliest', false], 'unknown'), 'immutable')
      for (const tag of ['latest', 'safe', 'finalized']) {
        assert.equal(scopeOf('eth_getBlockByNumber', [tag, false]), 'head', tag)
      }
      assert.equal(scopeOf('eth_getBlockByNumber', ['pending', false]), 'never')
    })

    it('the other by-number methods follow the same rules', () => {
      assert.equal(scopeOf('eth_getTransactionByBlockNumberAndIndex', ['0x10', '0x0']), 'immutable')
      assert.equal(scopeOf('eth_getTransactionByBlockNumberAndIndex', ['latest', '0x0']), 'head')
      assert.equal(scopeOf('eth_getBlockTransactionCountByNumber', ['pending']), 'never')
      assert.equal(scopeOf('eth_getUncleCountByBlockNumber', ['0x200']), 'block')
      assert.equal(scopeOf('eth_getTransactionCount', [addr, '0x1']), 'immutable')
      assert.equal(scopeOf('eth_getTransactionCount', [addr, '0x200']), 'block')
      // a nonce at latest lasts until the next block, like a balance
      assert.equal(scopeOf('eth_getTransactionCount', [addr, 'latest']), 'head')
      assert.equal(scopeOf('eth_getTransactionCount', [addr, 'pending']), 'never')
    })
  })

  describe('block references (EIP-1898)', () => {
    it('a block hash, bare or as {blockHash}, is immutable', () => {
      assert.equal(scopeOf('eth_getBalance', [addr, blockHash], 'unknown'), 'immutable')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockHash }], 'unknown'), 'immutable')
      assert.equal(scopeOf('eth_getCode', [addr, { blockHash, requireCanonical: true }]), 'immutable')
      assert.equal(
        scopeOf('eth_getStorageAt', [addr, '0x0', { blockHash, requireCanonical: false }]),
        'immutable',
      )
    })

    it('{blockNumber} is scoped like the number or tag it holds', () => {
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: '0x64' }]), 'immutable')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: '0x65' }]), 'block')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: '0x1' }], 'unknown'), 'block')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: 'earliest' }]), 'immutable')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: 'latest' }]), 'head')
      assert.equal(scopeOf('eth_getBalance', [addr, { blockNumber: 'pending' }]), 'never')
    })

    it('plain numbers and tags in a block reference', () => {
      assert.equal(scopeOf('eth_getBalance', [addr, '0x10']), 'immutable')
      assert.equal(scopeOf('eth_getBalance', [addr, 'latest']), 'head')
      assert.equal(scopeOf('eth_getBalance', [addr, 'pending']), 'never')
      assert.equal(scopeOf('eth_getProof', [addr, ['0x1'], '0x10']), 'immutable')
      assert.equal(scopeOf('eth_getProof', [addr, [], 'safe']), 'head')
    })
  })

  describe('eth_call', () => {
    const call = { to: addr, data: '0x70a08231' }

    it('is scoped by its block', () => {
      assert.equal(scopeOf('eth_call', [call, '0x10']), 'immutable')
      assert.equal(scopeOf('eth_call', [call, { blockHash }]), 'immutable')
      assert.equal(scopeOf('eth_call', [call, 'latest']), 'head')
      assert.equal(scopeOf('eth_call', [call, '0x10'], 'unknown'), 'block')
      assert.equal(scopeOf('eth_call', [call, 'pending']), 'never')
    })

    it('state and block overrides do not change the scope (they are part of the key)', () => {
      assert.equal(scopeOf('eth_call', [call, '0x10', { [addr]: { balance: '0x1' } }]), 'immutable')
      assert.equal(scopeOf('eth_call', [call, 'latest', {}, { number: '0x1' }]), 'head')
      // trailing nulls are dropped by parseParams
      assert.equal(scopeOf('eth_call', [call, '0x10', null, null]), 'immutable')
    })

    it('an omitted optional block argument means latest', () => {
      // no head-class row has an optional block argument today: eth_estimateGas's, made cacheable
      const spec: MethodSpec = { ...getMethodSpec('eth_estimateGas'), cacheClass: 'head' }
      assert.equal(scopeWith(spec, [call], finalized), 'head')
      assert.equal(scopeWith(spec, [call, null], finalized), 'head')
      assert.equal(scopeWith(spec, [call, '0x10'], finalized), 'immutable')
      assert.equal(scopeWith(spec, [call, 'pending'], finalized), 'never')
    })
  })

  describe('eth_getLogs', () => {
    it('a filter by block hash is immutable', () => {
      assert.equal(scopeOf('eth_getLogs', [{ blockHash }], 'unknown'), 'immutable')
      assert.equal(
        scopeOf('eth_getLogs', [{ blockHash, address: addr, topics: [null, txHash] }]),
        'immutable',
      )
    })

    it('a range is immutable when both ends are at or below the finalized block, kept by its block when both are numbers', () => {
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x64' }]), 'immutable')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: 'earliest', toBlock: '0x10' }]), 'immutable')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x65' }]), 'block')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x65', toBlock: '0x1' }]), 'block')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'finalized' }]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], 'unknown'), 'block')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x65', toBlock: 'safe' }]), 'head')
    })

    it('a missing end means latest', () => {
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1' }]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{ toBlock: '0x10' }]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{ toBlock: '0x65' }]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{}]), 'head')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: null, blockHash: null }]), 'head')
    })

    it('pending at either end is never', () => {
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'pending' }]), 'never')
      assert.equal(scopeOf('eth_getLogs', [{ fromBlock: 'pending', toBlock: '0x1' }]), 'never')
    })
  })

  it('eth_getBlockReceipts: its decimal and pending forms as parseParams turns them', () => {
    assert.equal(scopeOf('eth_getBlockReceipts', ['16']), 'immutable')
    assert.equal(scopeOf('eth_getBlockReceipts', [16]), 'immutable')
    assert.equal(scopeOf('eth_getBlockReceipts', [blockHash], 'unknown'), 'immutable')
    assert.equal(scopeOf('eth_getBlockReceipts', ['200']), 'block')
    // pending answers as latest (docs/compatibility.md §7): head, not never
    assert.equal(scopeOf('eth_getBlockReceipts', ['pending']), 'head')
  })

  it('eth_feeHistory is kept until the next head even for finalized blocks', () => {
    // the node's answer includes the next block's base fee, taken from the current head
    assert.equal(scopeOf('eth_feeHistory', ['0x4', '0x10', [25, 75]]), 'head')
    assert.equal(scopeOf('eth_feeHistory', [4, 'latest']), 'head')
    assert.equal(scopeOf('eth_feeHistory', ['0x4', 'pending']), 'never')
  })
})
