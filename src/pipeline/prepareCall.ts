import { authorizeCall } from '../auth/authorize.ts'
import {
  FilterNotFoundError,
  MethodNotFoundError,
  NotificationsNotSupportedError,
} from '../errors/rpcErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import type { RpcCall, RpcEntry, RpcId } from '../jsonrpc/types.ts'
import { getMethodSpec, type MethodSpec } from '../methods/methodTable.ts'
import { parseParams } from '../methods/params.ts'
import type { RefusalReason } from '../methods/priceOf.ts'
import { filterOwner } from './filterOwner.ts'
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
      /**
       * Its answer: the error that refuses it, or `false`, which geth answers eth_uninstallFilter of
       * a filter it does not know.
       */
      answer: TollgateError | false
      /** Input refused (priced as such), or a filter id this key did not make (free: priceOf). */
      reason: RefusalReason
    }

/**
 * Everything about a call that needs no I/O: method offered, params valid and normalised, method
 * and contract allowlists, the filter it names made by its key (the node's id in place of the
 * client's). A refused call carries its answer: its error (it costs what refused input costs), or,
 * for a filter id this key did not make, what a node answers for an unknown filter (free).
 */
export function prepareCall(ctx: RpcContext, entry: RpcEntry): PreparedCall {
  if ('error' in entry) return refused(entry.id, false, invalidMethodLabel, entry.error)
  const { call } = entry
  const spec = getMethodSpec(call.method)
  const label = spec.offered ? spec.name : invalidMethodLabel
  try {
    if (!spec.offered) throw new MethodNotFoundError(call.method)
    if (spec.subscriptionOnly && !ctx.subscriptions) throw new NotificationsNotSupportedError()
    let params = parseParams(spec.params, call.params)
    if (ctx.guard) authorizeCall(ctx.guard, spec.name, spec.contracts, params)
    if (spec.filterRole === 'reads' || spec.filterRole === 'removes') {
      const nodeFilter = openFilter(ctx, params)
      if (nodeFilter === undefined) return unknownFilter(call, spec)
      params = nodeFilter
    }
    const paramsAsSent = isUnchanged(params, call.params)
    return { ok: true, call, spec, params, paramsAsSent }
  } catch (err) {
    return refused(call.id, call.isNotification, label, err as TollgateError)
  }
}

function refused(id: RpcId, isNotification: boolean, method: string, error: TollgateError): PreparedCall {
  return { ok: false, id, isNotification, method, answer: error, reason: 'input' }
}

/**
 * The params of a call that names a filter, with the node's id for the client's; undefined when the
 * key did not make it (under the contract allowlists it has now).
 */
function openFilter(ctx: RpcContext, params: unknown[]): unknown[] | undefined {
  const nodeId = typeof params[0] === 'string' ? ctx.filterIds.open(params[0], filterOwner(ctx)) : undefined
  return nodeId === undefined ? undefined : [nodeId]
}

/**
 * A filter this key did not make is unknown to it: answered as a node answers one, never forwarded,
 * and free, for no node was asked and nothing it answers tells the key anything it did not know.
 */
function unknownFilter(call: RpcCall, spec: MethodSpec): PreparedCall {
  const answer = spec.filterRole === 'removes' ? false : new FilterNotFoundError()
  return {
    ok: false,
    id: call.id,
    isNotification: call.isNotification,
    method: spec.name,
    answer,
    reason: 'unknownFilter',
  }
}

/** Whether normalising the params changed nothing (no default added, no value rewritten). */
function isUnchanged(params: unknown[], sent: unknown[]): boolean {
  if (params.length !== sent.length) return false
  for (let index = 0; index < params.length; index++) if (params[index] !== sent[index]) return false
  return true
}
