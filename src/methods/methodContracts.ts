import { toGethFieldName } from './gethFieldName.ts'

/**
 * What one call touches, for a key with a contracts allowlist (docs/compatibility.md §4): the
 * addresses it names (each must be allowed, and there must be one), `none` (chain data only), or
 * `unchecked` (tollgate cannot tell: refused for such keys).
 */
export type CallContracts = readonly string[] | 'none' | 'unchecked'

/**
 * A method's answer to "which contracts does this call touch": `none`, `unchecked`, `filter` (the
 * contracts of the filter its id names: checked when eth_newFilter made it, and the id is sealed to
 * the allowlist it was made under), or a function that reads them from the call's params.
 */
export type Contracts = 'none' | 'unchecked' | 'filter' | ((params: unknown[]) => CallContracts)

/** The fields a state override may set for a key with a contracts allowlist: none replaces code. */
const overrideFields = new Set(['balance', 'nonce', 'state', 'statediff'])

/**
 * Every value of `object`'s fields named `name` the way geth reads JSON (toGethFieldName), so
 * `{"to": A, "TO": B}` is read as geth reads it. `name` is as toGethFieldName gives it.
 */
function fieldsNamed(object: unknown, name: string): unknown[] {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return []
  const values: unknown[] = []
  for (const [field, value] of Object.entries(object)) {
    if (field === name || toGethFieldName(field) === name) values.push(value)
  }
  return values
}

/** Adds an address field's addresses (one, or a non-empty list); false if it names none or is not one. */
function addAddresses(into: string[], value: unknown): boolean {
  if (typeof value === 'string') {
    into.push(value)
    return true
  }
  if (!Array.isArray(value) || value.length === 0) return false
  for (const item of value) {
    if (typeof item !== 'string') return false
    into.push(item)
  }
  return true
}

/**
 * The addresses a call object sends to: every `to` field must name one (a call without `to` creates
 * a contract, whose code could read anything).
 */
function addTargets(into: string[], call: unknown): boolean {
  const targets = fieldsNamed(call, 'to')
  if (targets.length === 0) return false
  for (const target of targets) {
    if (typeof target !== 'string') return false
    into.push(target)
  }
  return true
}

/**
 * The delegation targets of a call object's EIP-7702 authorizations, every field geth reads as
 * `authorizationList` (a null one is none): each authorization's `address` is a contract whose code
 * the call runs as the authorizing account's, a code override by another name, so each must be
 * allowed. False when a list, an authorization or its `address` is not what it should be.
 */
function addDelegations(into: string[], call: unknown): boolean {
  for (const authorizations of fieldsNamed(call, 'authorizationlist')) {
    if (authorizations === null) continue
    if (!Array.isArray(authorizations)) return false
    for (const authorization of authorizations) {
      const targets = fieldsNamed(authorization, 'address')
      if (targets.length === 0) return false
      for (const target of targets) {
        if (typeof target !== 'string') return false
        into.push(target)
      }
    }
  }
  return true
}

/**
 * A state override's addresses: balance, nonce, state and stateDiff only; one that sets code (or
 * moves a precompile, or anything else) makes the call unchecked.
 */
function addOverrides(into: string[], overrides: unknown): boolean {
  if (overrides === undefined || overrides === null) return true
  if (typeof overrides !== 'object' || Array.isArray(overrides)) return false
  for (const [overridden, account] of Object.entries(overrides)) {
    if (typeof account !== 'object' || account === null || Array.isArray(account)) return false
    for (const field of Object.keys(account)) {
      if (!overrideFields.has(toGethFieldName(field))) return false
    }
    into.push(overridden)
  }
  return true
}

/** The first param, an address (validated by the method's params). */
const firstParam = (params: unknown[]): CallContracts => (typeof params[0] === 'string' ? [params[0]] : [])

/**
 * A call object's `to`, its delegation targets, and the addresses of its state override, the param
 * at `overridesAt`.
 */
function callWithOverrides(overridesAt: number): (params: unknown[]) => CallContracts {
  return (params) => {
    const addresses: string[] = []
    if (!addTargets(addresses, params[0])) return []
    if (!addDelegations(addresses, params[0])) return 'unchecked'
    return addOverrides(addresses, params[overridesAt]) ? addresses : 'unchecked'
  }
}

/**
 * A log filter's `address` (eth_getLogs, eth_newFilter): every field so named must name addresses,
 * for geth reads the last of them and an empty one means every contract.
 */
const filterAddresses = (params: unknown[]): CallContracts => {
  const addresses: string[] = []
  for (const value of fieldsNamed(params[0], 'address')) if (!addAddresses(addresses, value)) return []
  return addresses
}

/** eth_simulateV1: every call's `to` and delegation targets, and every block's state override. */
const simulateContracts = (params: unknown[]): CallContracts => {
  const addresses: string[] = []
  for (const blocks of fieldsNamed(params[0], 'blockstatecalls')) {
    if (!Array.isArray(blocks)) return 'unchecked'
    for (const block of blocks) {
      for (const overrides of fieldsNamed(block, 'stateoverrides')) {
        if (!addOverrides(addresses, overrides)) return 'unchecked'
      }
      for (const calls of fieldsNamed(block, 'calls')) {
        if (!Array.isArray(calls)) return 'unchecked'
        for (const call of calls) {
          if (!addTargets(addresses, call) || !addDelegations(addresses, call)) return 'unchecked'
        }
      }
    }
  }
  return addresses
}

/**
 * debug_traceCall: the call's `to` and delegation targets, and its config's state override. Its
 * tracer is a built-in one, whatever the casing of its key: the params refuse any other
 * (traceOptions.ts).
 */
const traceCallContracts = (params: unknown[]): CallContracts => {
  const addresses: string[] = []
  if (!addTargets(addresses, params[0])) return []
  if (!addDelegations(addresses, params[0])) return 'unchecked'
  for (const overrides of fieldsNamed(params[2], 'stateoverrides')) {
    if (!addOverrides(addresses, overrides)) return 'unchecked'
  }
  return addresses
}

/**
 * eth_subscribe: a `logs` subscription's `address` as tollgate's own log matcher reads it (one, or
 * a non-empty list); newHeads and newPendingTransactions touch no contract.
 */
const subscribeContracts = (params: unknown[]): CallContracts => {
  const [kind, filter] = params
  if (kind === 'newHeads' || kind === 'newPendingTransactions') return 'none'
  if (kind !== 'logs') return 'unchecked'
  const addresses: string[] = []
  const address =
    typeof filter === 'object' && filter !== null ? (filter as { address?: unknown }).address : undefined
  return addAddresses(addresses, address) ? addresses : []
}

/**
 * The contracts column of the method table (docs/compatibility.md §4), one entry for every method
 * offered (a test holds them equal); a method without one is `unchecked`, refused for keys with a
 * contracts allowlist.
 */
export const methodContracts: Readonly<Record<string, Contracts>> = {
  // name a contract in their params
  eth_getStorageAt: firstParam,
  eth_getBalance: firstParam,
  eth_getCode: firstParam,
  eth_getTransactionCount: firstParam,
  eth_getProof: firstParam,
  eth_call: callWithOverrides(2),
  eth_estimateGas: callWithOverrides(2),
  eth_createAccessList: callWithOverrides(2),
  eth_getLogs: filterAddresses,
  eth_newFilter: filterAddresses,
  eth_simulateV1: simulateContracts,
  debug_traceCall: traceCallContracts,
  trace_call: callWithOverrides(3),
  eth_subscribe: subscribeContracts,
  eth_getFilterChanges: 'filter',
  eth_getFilterLogs: 'filter',

  // chain data only: blocks, transactions, receipts, the node and the network
  eth_getBlockByHash: 'none',
  eth_getBlockByNumber: 'none',
  eth_getUncleByBlockHashAndIndex: 'none',
  eth_getUncleByBlockNumberAndIndex: 'none',
  eth_getTransactionByBlockNumberAndIndex: 'none',
  eth_getTransactionByBlockHashAndIndex: 'none',
  eth_getTransactionByHash: 'none',
  eth_getTransactionReceipt: 'none',
  eth_getBlockReceipts: 'none',
  eth_getBlockTransactionCountByHash: 'none',
  eth_getBlockTransactionCountByNumber: 'none',
  eth_getUncleCountByBlockHash: 'none',
  eth_getUncleCountByBlockNumber: 'none',
  eth_chainId: 'none',
  net_version: 'none',
  net_listening: 'none',
  net_peerCount: 'none',
  eth_syncing: 'none',
  eth_protocolVersion: 'none',
  eth_mining: 'none',
  eth_hashrate: 'none',
  web3_clientVersion: 'none',
  web3_sha3: 'none',
  eth_accounts: 'none',
  eth_blockNumber: 'none',
  eth_gasPrice: 'none',
  eth_maxPriorityFeePerGas: 'none',
  eth_blobBaseFee: 'none',
  eth_feeHistory: 'none',
  // a signed transaction: its answer is its hash, no contract's state (as the hosted service,
  // unchecked); a type-4 one's authorizations are signed by the accounts they delegate and take
  // effect on chain, as the transaction's own calls do
  eth_sendRawTransaction: 'none',
  eth_sendRawTransactionSync: 'none',
  eth_newBlockFilter: 'none',
  eth_newPendingTransactionFilter: 'none',
  eth_uninstallFilter: 'none',
  eth_unsubscribe: 'none',

  // replay whatever contracts a block or transaction called: cannot be checked
  debug_traceTransaction: 'unchecked',
  debug_traceBlockByNumber: 'unchecked',
  debug_traceBlockByHash: 'unchecked',
  trace_block: 'unchecked',
  trace_transaction: 'unchecked',
  trace_get: 'unchecked',
  trace_filter: 'unchecked',
  trace_replayTransaction: 'unchecked',
  trace_replayBlockTransactions: 'unchecked',
}
