import type { Random } from '../../test/helpers/createRandom.ts'

/**
 * The methods of the workload and their shares of all calls, in percent: the order and rough sizes
 * hosted-RPC providers publish for mainnet traffic (`eth_call` about half, then block reads, balances,
 * chain id, receipts, the block number, logs, nonces, transactions, code, gas), rounded.
 */
export const methodShares = {
  eth_call: 50,
  eth_getBlockByNumber: 10,
  eth_getBalance: 7,
  eth_chainId: 6,
  eth_getTransactionReceipt: 6,
  eth_blockNumber: 5,
  eth_getLogs: 5,
  eth_getTransactionCount: 4,
  eth_getTransactionByHash: 3,
  eth_getCode: 2,
  eth_gasPrice: 1,
  eth_estimateGas: 1,
} as const

export type TraceMethod = keyof typeof methodShares

/** The head read a user's tick opens with: the block number, or the latest block, half each. */
export type HeadRead = 'eth_blockNumber' | 'eth_getBlockByNumber'

/**
 * A tick has ten calls on average: its head read (eth_blockNumber's 5% and half of
 * eth_getBlockByNumber's 10%) and nine drawn by these weights, the shares less the head reads
 * (eth_getBlockByNumber's other half are reads of the block number just read).
 */
const drawnShares: [TraceMethod, number][] = Object.entries({
  ...methodShares,
  eth_blockNumber: 0,
  eth_getBlockByNumber: methodShares.eth_getBlockByNumber / 2,
}) as [TraceMethod, number][]
const drawnTotal = drawnShares.reduce((sum, [, share]) => sum + share, 0)

/** The average count of drawn calls in a tick (beside its head read). */
export const drawnPerTick = 9

/** A method drawn by the weights above. */
export function drawMethod(random: Random): TraceMethod {
  let left = random.next() * drawnTotal
  for (const [method, share] of drawnShares) {
    left -= share
    if (left < 0) return method
  }
  return 'eth_call'
}

/** A tick's head read, half each. */
export function drawHeadRead(random: Random): HeadRead {
  return random.chance(0.5) ? 'eth_blockNumber' : 'eth_getBlockByNumber'
}
