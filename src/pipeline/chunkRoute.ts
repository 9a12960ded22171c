import type { SendOptions } from '../upstreams/SendOptions.ts'

/**
 * How a chunk `from`..`to` of a split call (`options`) is routed: pinned to its own blocks, not the
 * whole range's, so that an upstream that lags (lacks the newest blocks) still serves the older
 * chunks and a pruned one (lacks the oldest) the newer ones; and one at or below the finalized block,
 * an answer no head changes, goes to upstreams behind the head as well.
 */
export function chunkRoute(
  options: SendOptions,
  from: bigint,
  to: bigint,
  finalized: bigint | undefined,
): SendOptions {
  const settled = finalized !== undefined && to <= finalized
  return { ...options, fromBlock: from, block: to, headSensitive: options.headSensitive === true && !settled }
}
