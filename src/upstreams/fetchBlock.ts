import type { Upstream } from './createUpstream.ts'

/** A block as nodes answer it, with at least its number (a hex quantity). */
export type BlockSummary = Record<string, unknown> & { number: string; gasLimit?: unknown; hash?: unknown }

/**
 * The block `body` asks `upstream` for (an eth_getBlockByNumber request), straight to the node, not
 * through its pool: null when it answered without one; throws when it did not answer.
 */
export async function fetchBlock(
  upstream: Upstream,
  body: string,
  timeoutMs: number,
): Promise<BlockSummary | null> {
  const response = await upstream.post(body, { timeoutMs })
  if (response.status < 200 || response.status >= 300) throw new Error(`HTTP ${response.status}`)
  let answer: { result?: unknown }
  try {
    answer = JSON.parse(response.body.toString())
  } catch {
    throw new Error('an answer that is not JSON')
  }
  return isBlock(answer.result) ? answer.result : null
}

export function isBlock(value: unknown): value is BlockSummary {
  return typeof value === 'object' && value !== null && isQuantity((value as { number?: unknown }).number)
}

/** A hex quantity a node sends (what BigInt() takes without throwing). */
export function isQuantity(value: unknown): value is string {
  return typeof value === 'string' && /^0x[0-9a-f]{1,64}$/i.test(value)
}
