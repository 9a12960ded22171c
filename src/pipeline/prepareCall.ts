import { authorizeCall } from '../auth/authorize.ts'
import { MethodNotFoundError, NotificationsNotSupportedError } from '../errors/rpcErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import type { RpcCall, RpcEntry, RpcId } from '../jsonrpc/types.ts'
import { getMethodSpec, type MethodSpec } from '../methods/methodTable.ts'
import { parseParams } from '../methods/params.ts'
import type { RpcContext } from './rpcContext.ts'

/** How usage is recorded for calls whose method is not one of ours (keeps the history's labels bounded). */
const invalidMethodLabel = '(invalid)'

export type PreparedCall =
  | {
      ok: true
      call: RpcCall
      spec: MethodSpec
      params: unknown[]
      /** Normalising the params changed nothing (no default added, no value rewritten). */
      paramsAsSent: boolean
    }
  | {
      ok: false
      id: RpcId
      isNotification: boolean
      method: string
      error: TollgateError
    }

/**
 * Everything about a call that needs no I/O: method offered, params valid and normalised, method
 * and contract allowlists. A refused call carries its error (it costs what refused input costs).
 */
export function prepareCall(ctx: RpcContext, entry: RpcEntry): PreparedCall {
  if ('error' in entry) return refused(entry.id, false, invalidMethodLabel, entry.error)
  const { call } = entry
  const spec = getMethodSpec(call.method)
  const label = spec.offered ? spec.name : invalidMethodLabel
  try {
    if (!spec.offered) throw new MethodNotFoundError(call.method)
    if (spec.subscriptionOnly && !ctx.subscriptions) throw new NotificationsNotSupportedError()
    const params = parseParams(spec.params, call.params)
    if (ctx.guard) authorizeCall(ctx.guard, spec.name, spec.contracts, params)
    const paramsAsSent = isUnchanged(params, call.params)
    return { ok: true, call, spec, params, paramsAsSent }
  } catch (err) {
    return refused(call.id, call.isNotification, label, err as TollgateError)
  }
}

function refused(id: RpcId, isNotification: boolean, method: string, error: TollgateError): PreparedCall {
  return { ok: false, id, isNotification, method, error }
}

/** Whether normalising the params changed nothing (no default added, no value rewritten). */
function isUnchanged(params: unknown[], sent: unknown[]): boolean {
  if (params.length !== sent.length) return false
  for (let index = 0; index < params.length; index++) if (params[index] !== sent[index]) return false
  return true
}
