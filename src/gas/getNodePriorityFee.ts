import type { Logger } from 'pino'
import type { Network } from '../networks/createNetwork.ts'
import { callUpstream, UpstreamRpcError } from '../upstreams/callUpstream.ts'
import { type FeeBlock, hasTransactions } from './feeHistoryStore.ts'

/**
 * The node's own tip suggestion (eth_maxPriorityFeePerGas) for a window without transactions, the
 * only time the answers use it, so chains with traffic spend no call on it. A node without the
 * method gives undefined.
 */
export async function getNodePriorityFee(
  network: Network,
  blocks: readonly FeeBlock[],
  log: Logger,
): Promise<bigint | undefined> {
  if (blocks.some(hasTransactions)) return undefined
  try {
    const answer = await callUpstream<unknown>(network.pool, 'eth_maxPriorityFeePerGas', [])
    if (typeof answer === 'string' && /^0x[0-9a-f]+$/i.test(answer)) return BigInt(answer)
    log.debug(
      { chainId: network.chainId, answer },
      'eth_maxPriorityFeePerGas gave no quantity; empty windows suggest 0',
    )
  } catch (err) {
    if (!(err instanceof UpstreamRpcError)) throw err
    log.debug({ chainId: network.chainId, err }, 'eth_maxPriorityFeePerGas refused; empty windows suggest 0')
  }
  return undefined
}
