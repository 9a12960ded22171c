import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Contracts, methodContracts } from './methodContracts.ts'
import { getOfferedMethods } from './methodTable.ts'

const a = `0x${'aa'.repeat(20)}`
const b = `0x${'bb'.repeat(20)}`

function contractsOf(method: string, params: unknown[]) {
  const contracts = methodContracts[method] as Contracts
  assert.equal(typeof contracts, 'function', method)
  return (contracts as (params: unknown[]) => unknown)(params)
}

describe('methodContracts', () => {
  it('has one entry for every method offered, and none for others', () => {
    assert.deepEqual(Object.keys(methodContracts).sort(), getOfferedMethods().sort())
  })

  it('eth_call: the target, and the addresses of a state override without code', () => {
    assert.deepEqual(contractsOf('eth_call', [{ to: a }, 'latest']), [a])
    assert.deepEqual(contractsOf('eth_call', [{ to: a }, 'latest', { [a]: { balance: '0x1' } }]), [a, a])
    assert.deepEqual(
      contractsOf('eth_call', [{ to: a }, 'latest', { [b]: { nonce: '0x1', stateDiff: {}, state: {} } }]),
      [a, b],
    )
    assert.deepEqual(contractsOf('eth_call', [{ to: a }, 'latest', null]), [a])
    assert.deepEqual(contractsOf('eth_estimateGas', [{ to: a }, 'latest', { [b]: { balance: '0x1' } }]), [
      a,
      b,
    ])
  })

  it('eth_call: code, a moved precompile, or any other override field cannot be checked', () => {
    for (const account of [
      { code: '0x00' },
      { balance: '0x1', CODE: '0x00' },
      { movePrecompileToAddress: b },
      { unknown: 1 },
      'not an object',
    ]) {
      assert.equal(contractsOf('eth_call', [{ to: a }, 'latest', { [a]: account }]), 'unchecked')
    }
    assert.equal(contractsOf('eth_call', [{ to: a }, 'latest', [a]]), 'unchecked')
  })

  it('eth_call: every field geth reads as `to` counts (it matches names case-insensitively)', () => {
    assert.deepEqual(contractsOf('eth_call', [{ to: a, TO: b }, 'latest']), [a, b])
    assert.deepEqual(contractsOf('eth_call', [{ to: a, To: null }]), [], 'a null `To` creates a contract')
    assert.deepEqual(contractsOf('eth_call', [{ data: '0x00' }]), [], 'no `to`: a creation')
  })

  it('eth_call: each EIP-7702 authorization delegates to a contract the call runs: its target counts', () => {
    const signed = { chainId: '0x1', nonce: '0x0', yParity: '0x0', r: '0x1', s: '0x1' }
    const call = (authorizationList: unknown) => [{ to: a, authorizationList }, 'latest']
    assert.deepEqual(contractsOf('eth_call', call([{ ...signed, address: b }])), [a, b])
    assert.deepEqual(
      contractsOf(
        'eth_call',
        call([
          { ...signed, address: a },
          { ...signed, address: b },
        ]),
      ),
      [a, a, b],
    )
    assert.deepEqual(contractsOf('eth_call', call([])), [a])
    assert.deepEqual(contractsOf('eth_call', call(null)), [a], 'geth reads null as none')
    assert.deepEqual(
      contractsOf('eth_call', [{ to: a, AUTHORIZATIONLIST: [{ ADDRESS: b }], authorizationList: [] }]),
      [a, b],
      'every field geth reads as authorizationList, and as address',
    )
    assert.deepEqual(contractsOf('eth_call', call([{ address: a, Address: b }])), [a, a, b])
    for (const malformed of [
      {},
      [signed],
      [{ ...signed, address: null }],
      [{ ...signed, address: [b] }],
      ['not an object'],
      [null],
      'not a list',
    ]) {
      assert.equal(contractsOf('eth_call', call(malformed)), 'unchecked', JSON.stringify(malformed))
    }
    // a state override of the call is read as before, beside its delegations
    assert.deepEqual(
      contractsOf('eth_estimateGas', [
        { to: a, authorizationList: [{ address: b }] },
        'latest',
        { [a]: { balance: '0x1' } },
      ]),
      [a, b, a],
    )
    assert.equal(
      contractsOf('eth_call', [
        { to: a, authorizationList: [{ address: a }] },
        'latest',
        { [a]: { code: '0x' } },
      ]),
      'unchecked',
    )
    const simulate = (calls: unknown[]) => contractsOf('eth_simulateV1', [{ blockStateCalls: [{ calls }] }])
    assert.deepEqual(simulate([{ to: a }, { to: a, authorizationList: [{ address: b }] }]), [a, a, b])
    assert.equal(simulate([{ to: a, authorizationList: [{}] }]), 'unchecked')
    const trace = (authorizationList: unknown) =>
      contractsOf('debug_traceCall', [{ to: a, authorizationList }, 'latest', { tracer: 'callTracer' }])
    assert.deepEqual(trace([{ address: b }]), [a, b])
    assert.equal(trace([{ nonce: '0x0' }]), 'unchecked')
    assert.deepEqual(contractsOf('trace_call', [{ to: a, authorizationList: [{ address: b }] }, ['trace']]), [
      a,
      b,
    ])
  })

  it('eth_getLogs: each `address` field must name addresses (geth reads the last; empty means all)', () => {
    assert.deepEqual(contractsOf('eth_getLogs', [{ address: [a, b] }]), [a, b])
    assert.deepEqual(contractsOf('eth_getLogs', [{ address: a, ADDRESS: [] }]), [])
    assert.deepEqual(contractsOf('eth_getLogs', [{ address: a, addreſſ: null }]), [], 'ſ folds to s in geth')
    assert.deepEqual(contractsOf('eth_getLogs', [{ fromBlock: '0x0' }]), [])
  })

  it('eth_simulateV1: every call and every state override', () => {
    const simulate = (blocks: unknown[]) => contractsOf('eth_simulateV1', [{ blockStateCalls: blocks }])
    assert.deepEqual(simulate([{ calls: [{ to: a }, { to: b }] }]), [a, b])
    assert.deepEqual(simulate([{ stateOverrides: { [b]: { balance: '0x1' } }, calls: [{ to: a }] }]), [b, a])
    assert.equal(simulate([{ stateOverrides: { [a]: { code: '0x00' } }, calls: [{ to: a }] }]), 'unchecked')
    assert.equal(simulate([{ calls: [{ data: '0x00' }] }]), 'unchecked', 'a creation')
    assert.equal(simulate([{ calls: {} }]), 'unchecked')
    assert.deepEqual(simulate([]), [])
  })

  it('debug_traceCall: the call and its state override (its tracer is checked by its params)', () => {
    const trace = (config: unknown) => contractsOf('debug_traceCall', [{ to: a }, 'latest', config])
    assert.deepEqual(trace(undefined), [a])
    assert.deepEqual(trace({ tracer: 'callTracer', stateOverrides: { [b]: { balance: '0x1' } } }), [a, b])
    assert.deepEqual(trace({ StateOverrides: { [b]: { balance: '0x1' } } }), [a, b])
    assert.equal(trace({ stateOverrides: { [a]: { code: '0x00' } } }), 'unchecked')
    assert.equal(trace({ stateOverrideſ: { [a]: { CODE: '0x00' } } }), 'unchecked')
    assert.deepEqual(contractsOf('debug_traceCall', [{ to: b }, 'latest', { tracer: 'callTracer' }]), [b])
  })

  it("reads names as geth does: ſ and the Kelvin sign fold, ß and ligatures do not (JavaScript's upper case would)", () => {
    // geth reads no `address` in `addreß`: the filter is of every contract
    assert.deepEqual(contractsOf('eth_getLogs', [{ addreß: a }]), [])
    assert.deepEqual(contractsOf('eth_getLogs', [{ addreſſ: a }]), [a])
    assert.equal(contractsOf('eth_call', [{ to: a }, 'latest', { [a]: { ﬆate: {} } }]), 'unchecked')
    assert.deepEqual(contractsOf('eth_call', [{ to: a }, 'latest', { [a]: { ſtate: {} } }]), [a, a])
    const simulate = (payload: unknown) => contractsOf('eth_simulateV1', [payload])
    assert.deepEqual(simulate({ BLOCKSTATECALLS: [{ CALLS: [{ To: b }] }] }), [b])
    const kelvin = '\u212a'
    assert.deepEqual(simulate({ [`bloc${kelvin}StateCalls`]: [{ calls: [{ to: b }] }] }), [b])
  })

  it('eth_subscribe: a logs subscription names its addresses; heads and pending transactions none', () => {
    assert.deepEqual(contractsOf('eth_subscribe', ['logs', { address: [a, b] }]), [a, b])
    assert.deepEqual(contractsOf('eth_subscribe', ['logs', { address: [] }]), [])
    assert.deepEqual(contractsOf('eth_subscribe', ['logs', { topics: [] }]), [])
    assert.deepEqual(contractsOf('eth_subscribe', ['logs']), [])
    assert.equal(contractsOf('eth_subscribe', ['newHeads']), 'none')
    assert.equal(contractsOf('eth_subscribe', ['newPendingTransactions']), 'none')
    assert.equal(contractsOf('eth_subscribe', ['syncing']), 'unchecked')
  })
})
