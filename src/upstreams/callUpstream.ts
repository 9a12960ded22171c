import type { UpstreamPool } from './createUpstreamPool.ts'

export class UpstreamRpcError extends Error {
  override name = 'UpstreamRpcError'
  constructor(
    readonly method: string,
    readonly rpcError: { code?: number; message?: string },
  ) {
    super(`${method} answered ${rpcError.code}: ${rpcError.message}`)
  }
}

/** For the gateway's own background calls (head tracking, fee history): one call, its parsed result. */
export async function callUpstream<T>(pool: UpstreamPool, method: string, params: unknown[]): Promise<T> {
  const answer = JSON.parse(
    (await pool.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { retry: true })).toString(),
  ) as {
    result?: T
    error?: { code?: number; message?: string }
  }
  if (answer.error) throw new UpstreamRpcError(method, answer.error)
  return answer.result as T
}
