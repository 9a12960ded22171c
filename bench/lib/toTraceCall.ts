import { type Address, encodeFunctionData, type Hash } from 'viem'
import { demoAbi } from '../../src/devnet/contracts.ts'
import type { HeadRead } from './methodShares.ts'
import type { Draw } from './planTrace.ts'
import type { Dapp } from './startDappChain.ts'

export type TraceCall = { method: string; params: unknown[] }

/** What a user knows when its tick's calls are bound: the block it just read, its dapp, its transactions. */
export type UserView = {
  /** The block number the tick's head read answered. */
  block: number
  self: Address
  dapp: Dapp
  /** Another user of the same dapp (whose balance a page may show). */
  peer: Address
  /** The user's last deposit, if it sent one. */
  ownTransaction: Hash | undefined
  /** The keeper's latest transactions to the dapp (an activity feed). */
  recent: readonly Hash[]
}

export const toHex = (number: number | bigint) => `0x${number.toString(16)}`

/** The call a tick's head read makes. */
export function toHeadCall(headRead: HeadRead): TraceCall {
  return headRead === 'eth_blockNumber'
    ? { method: 'eth_blockNumber', params: [] }
    : { method: 'eth_getBlockByNumber', params: ['latest', false] }
}

/**
 * A drawn call bound to what the user knows, as dapps make them: contract reads pinned to the block
 * just read or at `latest`, the user's balance and nonce, receipts of its own deposit or of the dapp's
 * latest transactions, the dapp's logs over the last few blocks, its code, gas for a transaction.
 */
export function toTraceCall({ method, choices: [a, b, c] }: Draw, view: UserView): TraceCall {
  const contract = view.dapp.contracts[b < 0.5 ? 0 : 1]
  const pinnedOrLatest = (pinnedShare: number) => (c < pinnedShare ? toHex(view.block) : 'latest')
  switch (method) {
    case 'eth_call':
      return { method, params: [{ to: contract, data: contractRead(a, view) }, pinnedOrLatest(0.5)] }
    case 'eth_getBlockByNumber':
      return { method, params: [toHex(Math.max(0, view.block - (a < 0.8 ? 0 : 1))), false] }
    case 'eth_getBalance':
      return { method, params: [view.self, pinnedOrLatest(0.2)] }
    case 'eth_getTransactionReceipt':
    case 'eth_getTransactionByHash':
      return { method, params: [transactionOf(a, b, view)] }
    case 'eth_getLogs':
      return { method, params: [logsFilter(a, c, view)] }
    case 'eth_getTransactionCount':
      return { method, params: [view.self, a < 0.5 ? 'pending' : 'latest'] }
    case 'eth_getCode':
      return { method, params: [contract, 'latest'] }
    case 'eth_estimateGas':
      return { method, params: [{ from: view.self, to: contract, data: incrementData }] }
    default:
      // eth_chainId, eth_gasPrice: no params
      return { method, params: [] }
  }
}

const incrementData = encodeFunctionData({ abi: demoAbi, functionName: 'increment' })
const counterData = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })
const ownerData = encodeFunctionData({ abi: demoAbi, functionName: 'owner' })

/** The dapp's shared counter, the user's balance, another user's, the owner. */
function contractRead(choice: number, view: UserView): Hash {
  if (choice < 0.4) return counterData
  if (choice < 0.8) return encodeFunctionData({ abi: demoAbi, functionName: 'balances', args: [view.self] })
  if (choice < 0.9) return encodeFunctionData({ abi: demoAbi, functionName: 'balances', args: [view.peer] })
  return ownerData
}

/** The user's own deposit (when it sent one), else one of the dapp's latest transactions. */
function transactionOf(choice: number, pick: number, view: UserView): Hash {
  if (view.ownTransaction !== undefined && choice < 0.7) return view.ownTransaction
  const recent = view.recent
  return recent[Math.floor(pick * recent.length)] ?? (recent[0] as Hash)
}

const logsDepths = [0, 0, 1, 1, 2, 4, 9]

/** The dapp's logs from a few blocks back to the block just read (or to `latest`, now and then). */
function logsFilter(choice: number, pinned: number, view: UserView) {
  const depth = logsDepths[Math.floor(choice * logsDepths.length)] ?? 0
  return {
    address: view.dapp.contracts,
    fromBlock: toHex(Math.max(0, view.block - depth)),
    toBlock: pinned < 0.8 ? toHex(view.block) : 'latest',
  }
}
