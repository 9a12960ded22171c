import { MethodNotFoundError, NotificationsNotSupportedError } from '../errors/errors.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcCall, RpcPayload } from '../jsonrpc/types.ts'
import { getMethodSpec } from '../methods/methodTable.ts'
import { parseParams } from '../methods/params.ts'
import { capGas } from './capGas.ts'
import { isNotFoundError } from './isNotFoundError.ts'
import type { RpcContext } from './rpcContext.ts'

/** The largest answer that can be an error object; anything longer is a result and is not parsed. */
const maxErrorBytes = 4096

/**
 * One call through the pipeline: validate, normalise, forward, apply the COMPAT.md §7 duties.
 * Upstream answers are returned as the bytes the node sent, parsed only when a duty must look inside.
 * Throws TollgateErrors; the caller turns them into wire errors.
 */
export async function handleRpc(ctx: RpcContext, call: RpcCall): Promise<RpcPayload> {
  const spec = getMethodSpec(call.method)
  if (!spec.offered) throw new MethodNotFoundError(call.method)
  if (spec.subscriptionOnly) throw new NotificationsNotSupportedError()
  let params = parseParams(spec.params, call.params)
  if (spec.localResult) return serializeResult(call.id, spec.localResult())
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
