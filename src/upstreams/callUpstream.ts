import { hashLength } from '../jsonrpc/hashes.ts'
import type { UpstreamPool } from './createUpstreamPool.ts'
import type { SendOptions } from './SendOptions.ts'

export class UpstreamRpcError extends Error {
  override name = 'UpstreamRpcError'
  constructor(
    readonly method: string,
    readonly rpcError: { code?: number; message?: string },
  ) {
    super(`${method} answered ${rpcError.code}: ${rpcError.message}`)
  }
}

/**
 * For the gateway's own background calls (head tracking, fee history): one call, its parsed result.
 * A block read by number or hash is routed as a client's is (docs/compatibility.md §7): to members
 * that have the block, a null from one of them not the last word (null only when every member says so).
 */
export async function callUpstream<T>(pool: UpstreamPool, method: string, params: unknown[]): Promise<T> {
  const answer = JSON.parse(
    (
      await pool.send(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        sendOptionsOf(method, params),
      )
    ).toString(),
  ) as {
    result?: T
    error?: { code?: number; message?: string }
  }
  if (answer.error) throw new UpstreamRpcError(method, answer.error)
  return answer.result as T
}

const retryOnly: SendOptions = { retry: true }
const byHash: SendOptions = { retry: true, nullIsMissing: true }

function sendOptionsOf(method: string, params: unknown[]): SendOptions {
  const [id] = params
  if ((method !== 'eth_getBlockByNumber' && method !== 'eth_getBlockByHash') || typeof id !== 'string') {
    return retryOnly
  }
  if (id.length === hashLength) return byHash
  if (!/^0x[0-9a-f]{1,16}$/i.test(id)) return retryOnly
  // the gateway reads blocks it knows of (at or below a head): a null is a member without it
  return { retry: true, block: BigInt(id), nullIsMissing: true }
}
