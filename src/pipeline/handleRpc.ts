import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import { capGas } from './capGas.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { RpcContext } from './rpcContext.ts'

/** The largest answer that can be an error object; anything longer is a result and is not parsed. */
const maxErrorBytes = 4096

/**
 * Runs one prepared call: the gas cap, the upstream, the COMPAT.md §7 duties on the answer.
 * Upstream answers are returned as the bytes the node sent, parsed only when a duty must look inside.
 * Throws TollgateErrors; the caller turns them into wire errors.
 */
export async function handleRpc(ctx: RpcContext, prepared: PreparedCall & { ok: true }): Promise<RpcPayload> {
  const { call, spec } = prepared
  let { params } = prepared
  if (spec.localResult) return serializeResult(call.id, spec.localResult())
  if (spec.subscriptionOnly && ctx.subscriptions) {
    const result =
      spec.name === 'eth_subscribe'
        ? ctx.subscriptions.subscribe(params)
        : ctx.subscriptions.unsubscribe(params[0])
    return serializeResult(call.id, result)
  }
  if (spec.capsGas) {
    if (!ctx.network.heads.latest()) await ctx.network.heads.poll()
    const head = ctx.network.heads.latest()
    if (head) params = capGas(params, head)
  }

  const body = JSON.stringify({ jsonrpc: '2.0', id: call.id, method: call.method, params })
  const answer = await ctx.network.pool.send(body, ctx.cancellation)

  if (spec.nullWhenNotFound && answer.length <= maxErrorBytes && answer.includes('"error"')) {
    const parsed = JSON.parse(answer.toString()) as { error?: { code?: unknown; message?: unknown } }
    if (parsed.error && isNotFoundError(parsed.error)) return serializeResult(call.id, null)
  }
  return answer
}
