import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { callObject } from './callObject.ts'
import { logFilter } from './logFilter.ts'
import { getFailoverMethods, getMethodSpec, getOfferedMethods } from './methodTable.ts'
import {
  address,
  blockCount,
  blockRef,
  blockTag,
  parseParams,
  quantity,
  receiptsBlockRef,
  storageKey,
} from './params.ts'
import { priceOf } from './priceOf.ts'

const hash = `0x${'ab'.repeat(32)}`
const addr = `0x${'cd'.repeat(20)}`

function rejects(parse: (value: unknown, index: number) => unknown, values: unknown[]) {
  for (const value of values) assert.throws(() => parse(value, 2), InvalidParamsError, JSON.stringify(value))
}

describe('parameter forms (docs/compatibility.md §7)', () => {
  it('quantities: 0x hex without leading zeros', () => {
    for (const value of ['0x0', '0x1', '0xabc', '0xABC']) assert.equal(quantity(value, 0), value)
    rejects(quantity, ['0x', '0x01', '1', 1, null, '0xg', ' 0x1', '0x1 '])
  })

  it('block tags: the five tags and hex numbers, nothing else', () => {
    for (const value of ['latest', 'earliest', 'pending', 'safe', 'finalized', '0x0', '0x10']) {
      assert.equal(blockTag(value, 0), value)
    }
    rejects(blockTag, ['Latest', 'head', '0x00', '12', 12, hash, { blockNumber: '0x1' }])
  })

  it('block references: also hashes and EIP-1898 objects', () => {
    for (const value of [
      hash,
      { blockHash: hash },
      { blockHash: hash, requireCanonical: true },
      { blockNumber: '0x1' },
    ]) {
      assert.deepEqual(blockRef(value, 0), value)
    }
    rejects(blockRef, [
      { blockHash: '0x12' },
      { blockNumber: 'soon' },
      { blockHash: hash, blockNumber: '0x1' },
      {},
    ])
  })

  it('eth_getBlockReceipts: a decimal integer becomes hex, pending becomes latest', () => {
    assert.equal(receiptsBlockRef('12', 0), '0xc')
    assert.equal(receiptsBlockRef(12, 0), '0xc')
    assert.equal(receiptsBlockRef('0', 0), '0x0')
    assert.equal(receiptsBlockRef('pending', 0), 'latest')
    assert.equal(receiptsBlockRef('latest', 0), 'latest')
    rejects(receiptsBlockRef, ['012', -1, 1.5, '1e3'])
    // block numbers are 64 bits, and a huge decimal is refused before BigInt spends seconds reading it
    assert.equal(receiptsBlockRef('18446744073709551615', 0), '0xffffffffffffffff')
    rejects(receiptsBlockRef, ['18446744073709551616', '9'.repeat(5_000_000)])
  })

  it('eth_feeHistory block counts: hex or decimal, at most 1024 blocks (anvil aborts past 64 bits)', () => {
    for (const value of [0, 4, '0x4', '4', 1024, '0x400', '1024']) {
      assert.equal(blockCount(value, 0), value)
    }
    for (const value of [1025, '0x401', '1025', '0xffffffffffffffff', '18446744073709551616']) {
      assert.throws(() => blockCount(value, 0), {
        code: -32602,
        message: 'invalid argument 0: block count too large, the limit is 1024 blocks',
      })
    }
    rejects(blockCount, [`0x${'f'.repeat(40)}`, '9'.repeat(5_000_000)])
    rejects(blockCount, ['0x04', '-1', -1, 1.5, null, '0x'])
  })

  it('addresses are 20 bytes; storage keys up to 32 bytes, padded', () => {
    assert.equal(address(addr, 0), addr)
    rejects(address, [addr.slice(0, 41), `${addr}00`, addr.slice(2)])
    assert.equal(storageKey('0x1', 0), `0x${'0'.repeat(63)}1`)
    assert.equal(storageKey(hash, 0), hash)
    rejects(storageKey, [`${hash}00`, '0x', '0xz'])
  })

  it('call objects and log filters check the fields they know', () => {
    callObject({ from: addr, to: null, gas: '0x1', data: '0x', value: '0x0', extra: 'passes' }, 0)
    rejects(callObject, [{ to: '0x12' }, { gas: '0x01' }, { data: '0x1' }, [], 'x'])
    // geth's widths: gas, nonce, chainId and type are 64 bits; prices and value 256
    callObject({ gas: `0x${'f'.repeat(16)}`, value: `0x${'f'.repeat(64)}`, nonce: '0x0' }, 0)
    rejects(callObject, [
      { gas: `0x1${'0'.repeat(16)}` },
      { nonce: `0x1${'0'.repeat(16)}` },
      { value: `0x1${'0'.repeat(64)}` },
      { maxFeePerGas: `0x${'f'.repeat(5_000_000)}` },
    ])
    logFilter({ fromBlock: 'latest', address: [addr], topics: [hash, null, [hash, null]] }, 0)
    rejects(logFilter, [
      { address: '0x1' },
      { topics: ['0x1'] },
      { blockHash: hash, fromBlock: '0x1' },
      { fromBlock: 'x' },
    ])
  })

  it('errors name the argument', () => {
    assert.throws(() => blockTag('x', 3), { message: /^invalid argument 3: / })
  })
})

describe('parseParams', () => {
  const specs = getMethodSpec('eth_estimateGas').params

  it('counts missing, extra and trailing-null arguments as geth does', () => {
    assert.deepEqual(parseParams(specs, [{ to: addr }, '0x1']), [{ to: addr }, '0x1'])
    assert.deepEqual(parseParams(specs, [{ to: addr }, '0x1', null]), [{ to: addr }, '0x1'])
    assert.throws(() => parseParams(specs, []), {
      message: 'invalid argument 0: missing value for required argument',
    })
    assert.throws(() => parseParams(specs, [{}, 'latest', {}, {}, 1]), {
      message: 'invalid argument 4: too many arguments, want at most 4',
    })
  })

  it('fills the block geth defaults to latest when it is left out or null', () => {
    for (const method of ['eth_call', 'eth_estimateGas', 'eth_createAccessList']) {
      const { params } = getMethodSpec(method)
      assert.deepEqual(parseParams(params, [{ to: addr }]), [{ to: addr }, 'latest'], method)
      assert.deepEqual(parseParams(params, [{ to: addr }, null]), [{ to: addr }, 'latest'], method)
      assert.deepEqual(parseParams(params, [{ to: addr }, '0x5']), [{ to: addr }, '0x5'], method)
      assert.throws(() => parseParams(params, [{ to: addr }, 'soon']), /invalid argument 1/, method)
    }
    const overrides = { [addr]: { balance: '0x1' } }
    assert.deepEqual(parseParams(getMethodSpec('eth_call').params, [{ to: addr }, null, overrides]), [
      { to: addr },
      'latest',
      overrides,
    ])
  })

  it('answers the very values it was given when nothing needed a change (the call then goes as written)', () => {
    const { params: proofSpecs } = getMethodSpec('eth_getProof')
    const keys = [`0x${'00'.repeat(32)}`]
    const sent = [addr, keys, 'latest']
    const parsed = parseParams(proofSpecs, sent)
    assert.equal(parsed[1], keys, 'the storage keys array itself')
    // a short storage key is padded to 32 bytes: a new array, and the call is written anew
    const padded = parseParams(proofSpecs, [addr, ['0x1'], 'latest'])
    assert.deepEqual(padded[1], [`0x${'0'.repeat(63)}1`])
  })

  it('keeps the arguments geth requires required', () => {
    for (const [method, params] of [
      ['eth_getBalance', [addr]],
      ['eth_getStorageAt', [addr, '0x0']],
      ['eth_getProof', [addr, []]],
      ['eth_getBlockByNumber', ['latest']],
      ['debug_traceCall', [{ to: addr }]],
    ] as const) {
      assert.throws(() => parseParams(getMethodSpec(method).params, [...params]), {
        message: `invalid argument ${params.length}: missing value for required argument`,
      })
    }
  })
})

describe('the method table', () => {
  describe('its default row: what a method the table does not name gets, and what every row starts from', () => {
    const unknown = getMethodSpec('eth_somethingNew')

    it('a method it does not name is not offered: -32601 under the name asked, priced as refused input (5)', () => {
      assert.equal(unknown.offered, false)
      assert.equal(unknown.name, 'eth_somethingNew')
      assert.ok(!getOfferedMethods().includes(unknown.name))
      // refused before it runs (docs/compatibility.md §2 "Not offered"): a refused call, not a served one
      assert.equal(priceOf({ kind: 'refusedCall', reason: 'input' }), 5)
    })

    it('is never cached, never sent to a partner, never answered by the gateway itself', () => {
      assert.equal(unknown.cacheClass, 'never')
      assert.equal(unknown.failoverEligible, false)
      assert.ok(!getFailoverMethods().includes(unknown.name))
      assert.equal(unknown.localResult, undefined)
      assert.equal(unknown.subscriptionOnly, false)
    })

    it('assumes nothing of a call: it names no contract (refused under a contracts allowlist) and gets no handling', () => {
      assert.equal(unknown.contracts, 'unchecked')
      assert.equal(unknown.filterRole, undefined)
      assert.equal(unknown.pinnedNeeds, undefined)
      for (const handling of [
        'monotonicHead',
        'nodeState',
        'nullWhenNotFound',
        'capsGas',
        'boundsBlockRange',
        'countsLogs',
        'sendsTransaction',
        'nullWhenNoBlock',
        'waitsForReceipt',
      ] as const) {
        assert.equal(unknown[handling], false, handling)
      }
    })

    it('a row that names no price costs 80, the price §2 gives most reads', () => {
      assert.equal(unknown.costCredits, 80)
      for (const method of ['eth_blockNumber', 'eth_getBalance', 'net_peerCount', 'web3_clientVersion']) {
        assert.equal(getMethodSpec(method).costCredits, unknown.costCredits, method)
      }
    })

    it("a row is safe to send twice unless it sends a transaction or works on a node's filters", () => {
      assert.equal(unknown.idempotent, true)
      for (const method of getOfferedMethods()) {
        const spec = getMethodSpec(method)
        if (!spec.idempotent) assert.ok(spec.sendsTransaction || spec.nodeState, method)
      }
    })
  })

  it('prices the core methods as docs/compatibility.md §2 says', () => {
    const expected: Record<string, number> = {
      eth_getStorageAt: 80,
      eth_getBlockByHash: 80,
      eth_getBlockByNumber: 80,
      eth_getTransactionReceipt: 80,
      eth_call: 80,
      eth_createAccessList: 80,
      eth_getUncleByBlockHashAndIndex: 150,
      eth_getTransactionByBlockNumberAndIndex: 150,
      eth_getTransactionByBlockHashAndIndex: 150,
      eth_getProof: 150,
      eth_getBlockReceipts: 1000,
    }
    for (const [method, cost] of Object.entries(expected)) {
      assert.equal(getMethodSpec(method).costCredits, cost, method)
      assert.equal(getMethodSpec(method).offered, true, method)
    }
  })

  it('never offers methods that use the node keys or dev/admin namespaces', () => {
    const offered = getOfferedMethods()
    for (const method of offered) {
      assert.doesNotMatch(method, /^(personal|admin|miner|anvil|evm|hardhat|txpool)_/)
    }
    for (const method of [
      'eth_sendTransaction',
      'eth_sign',
      'eth_signTransaction',
      'eth_signTypedData_v4',
      'debug_setHead',
    ]) {
      assert.equal(getMethodSpec(method).offered, false, method)
    }
  })

  it('marks the failover methods of docs/compatibility.md §7 eligible', () => {
    for (const method of [
      'eth_getStorageAt',
      'eth_getTransactionByBlockNumberAndIndex',
      'eth_getTransactionByBlockHashAndIndex',
      'eth_getTransactionReceipt',
    ]) {
      assert.equal(getMethodSpec(method).failoverEligible, true, method)
    }
  })
})
