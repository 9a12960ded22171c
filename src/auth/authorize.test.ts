import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ProjectSettingsError } from '../errors/authErrors.ts'
import { callObject } from '../methods/callObject.ts'
import { getMethodSpec, getOfferedMethods } from '../methods/methodTable.ts'
import { simulatePayload } from '../methods/simulatePayload.ts'
import { authorizeCall, type CallGuard } from './authorize.ts'

const allowed = `0x${'aa'.repeat(20)}`
const other = `0x${'bb'.repeat(20)}`
const hash = `0x${'11'.repeat(32)}`

/** A key whose contracts allowlist is [allowed] (written in mixed case, as a client may). */
const guard: CallGuard = { methods: [], contracts: [new Set([allowed])] }

/**
 * For each method that names contracts, a call naming `contract` and nothing else: the walk below
 * fails for a method that reads addresses and has no sample here.
 */
const naming: Record<string, (contract: string) => unknown[]> = {
  eth_getStorageAt: (contract) => [contract, '0x0', 'latest'],
  eth_getBalance: (contract) => [contract, 'latest'],
  eth_getCode: (contract) => [contract, 'latest'],
  eth_getTransactionCount: (contract) => [contract, 'latest'],
  eth_getProof: (contract) => [contract, [], 'latest'],
  eth_call: (contract) => [{ to: contract, data: '0x' }, 'latest'],
  eth_estimateGas: (contract) => [{ to: contract }, 'latest'],
  eth_createAccessList: (contract) => [{ to: contract }, 'latest'],
  eth_getLogs: (contract) => [{ address: contract, fromBlock: '0x0' }],
  eth_newFilter: (contract) => [{ address: [contract] }],
  eth_simulateV1: (contract) => [{ blockStateCalls: [{ calls: [{ to: contract }] }] }, 'latest'],
  debug_traceCall: (contract) => [{ to: contract }, 'latest', { tracer: 'callTracer' }],
  trace_call: (contract) => [{ to: contract }, ['trace'], 'latest'],
  eth_subscribe: (contract) => ['logs', { address: contract }],
}

/** A signed EIP-7702 authorization that delegates its account to `target`'s code (`target` undefined: none named). */
const authorization = (target: string | undefined) => ({
  chainId: '0x7a69',
  ...(target === undefined ? {} : { address: target }),
  nonce: '0x0',
  yParity: '0x0',
  r: `0x${'01'.repeat(32)}`,
  s: `0x${'02'.repeat(32)}`,
})

/**
 * For each method whose params hold call objects, a call to the allowed contract whose
 * `authorizationList` delegates to `target`: the walk below fails for such a method without one.
 */
const delegating: Record<string, (target: string | undefined) => unknown[]> = {
  eth_call: (target) => [{ to: allowed, authorizationList: [authorization(target)] }, 'latest'],
  eth_estimateGas: (target) => [{ to: allowed, authorizationList: [authorization(target)] }, 'latest'],
  eth_createAccessList: (target) => [{ to: allowed, authorizationList: [authorization(target)] }, 'latest'],
  eth_simulateV1: (target) => [
    { blockStateCalls: [{ calls: [{ to: allowed, authorizationList: [authorization(target)] }] }] },
    'latest',
  ],
  debug_traceCall: (target) => [
    { to: allowed, authorizationList: [authorization(target)] },
    'latest',
    { tracer: 'callTracer' },
  ],
  trace_call: (target) => [{ to: allowed, authorizationList: [authorization(target)] }, ['trace'], 'latest'],
}

/** Whether a method's params hold call objects: one, or eth_simulateV1's. */
const takesCallObjects = (method: string) =>
  getMethodSpec(method).params.some(({ parse }) => parse === callObject || parse === simulatePayload)

function refuses(method: string, params: unknown[]): boolean {
  try {
    authorizeCall(guard, method, getMethodSpec(method).contracts, params)
    return false
  } catch (err) {
    assert.ok(err instanceof ProjectSettingsError, `${method}: ${String(err)}`)
    return true
  }
}

describe('authorizeCall under a contracts allowlist', () => {
  it('the default row is refused: a method nobody thought about cannot reach a contract', () => {
    assert.equal(getMethodSpec('eth_somethingNew').contracts, 'unchecked')
  })

  it('walks every offered method: each checks what it names, touches nothing, or is refused', () => {
    const seen = { checked: 0, delegating: 0, none: 0, refused: 0, filter: 0 }
    for (const method of getOfferedMethods()) {
      const { contracts } = getMethodSpec(method)
      if (typeof contracts === 'function') {
        const sample = naming[method]
        assert.ok(sample, `${method} reads addresses from its params: give it a sample`)
        assert.equal(refuses(method, sample(allowed)), false, `${method} naming the allowed contract`)
        assert.equal(
          refuses(method, sample(allowed.toUpperCase().replace('0X', '0x'))),
          false,
          `${method} in upper case`,
        )
        assert.equal(refuses(method, sample(other)), true, `${method} naming another contract`)
        seen.checked++
        if (takesCallObjects(method)) {
          // EIP-7702: an authorization installs its target's code, a code override by another name
          const delegate = delegating[method]
          assert.ok(delegate, `${method} takes call objects: give it a delegating sample`)
          assert.equal(
            refuses(method, delegate(allowed)),
            false,
            `${method} delegating to the allowed contract`,
          )
          assert.equal(refuses(method, delegate(other)), true, `${method} delegating to another contract`)
          assert.equal(
            refuses(method, delegate(undefined)),
            true,
            `${method} with an unreadable authorization`,
          )
          seen.delegating++
        }
      } else if (contracts === 'unchecked') {
        assert.equal(takesCallObjects(method), false, `${method} takes call objects: check what they name`)
        // refused whatever it names
        assert.equal(refuses(method, [hash]), true, method)
        seen.refused++
      } else {
        assert.equal(naming[method], undefined, `${method} names no contract, yet has a sample`)
        assert.equal(takesCallObjects(method), false, `${method} takes call objects: check what they name`)
        assert.equal(refuses(method, [hash]), false, method)
        seen[contracts]++
      }
    }
    // the table as it stands: a row moved from one kind to another shows here
    assert.deepEqual(seen, { checked: 14, delegating: 6, none: 35, refused: 9, filter: 2 })
    assert.deepEqual(Object.keys(delegating).sort(), getOfferedMethods().filter(takesCallObjects).sort())
  })

  it('a guard with no contracts allowlist checks no contract, not even an unchecked method', () => {
    const methodsOnly: CallGuard = { methods: [new Set(getOfferedMethods())], contracts: [] }
    for (const method of getOfferedMethods()) {
      authorizeCall(methodsOnly, method, getMethodSpec(method).contracts, [])
    }
  })

  it('every list must allow every address: the key and the JWT narrow together', () => {
    const narrowed: CallGuard = { methods: [], contracts: [new Set([allowed, other]), new Set([allowed])] }
    const { contracts } = getMethodSpec('eth_getLogs')
    authorizeCall(narrowed, 'eth_getLogs', contracts, [{ address: allowed }])
    assert.throws(
      () => authorizeCall(narrowed, 'eth_getLogs', contracts, [{ address: [allowed, other] }]),
      ProjectSettingsError,
    )
  })

  it('the method allowlist comes first, whatever the contracts', () => {
    const methods: CallGuard = { methods: [new Set(['eth_call'])], contracts: [new Set([allowed])] }
    assert.throws(
      () => authorizeCall(methods, 'eth_blockNumber', 'none', []),
      (err: ProjectSettingsError) => err.logDetails === 'method not allowed',
    )
  })
})
