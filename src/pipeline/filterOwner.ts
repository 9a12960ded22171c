import type { FilterOwner } from '../auth/createFilterIds.ts'
import type { RpcContext } from './rpcContext.ts'

/** Who the filters of this call's key, network and contract allowlists belong to. */
export function filterOwner(ctx: Pick<RpcContext, 'key' | 'network' | 'guard'>): FilterOwner {
  return { keyId: ctx.key.subject.keyId, network: ctx.network.name, guard: ctx.guard }
}
