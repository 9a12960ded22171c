import { UnknownNetworkError } from '../errors/errors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import { authorizeKeyRequest, type KeyRequest } from './authorizeKeyRequest.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import { createSocketAccess } from './createSocketAccess.ts'
import type { HttpRpcDeps } from './handleHttpRpc.ts'
import { openRpcSocket, type RpcSocketSession, type SocketPort } from './handleRpcSocket.ts'
import { errorOutcome } from './runRpcRequest.ts'

export type SocketUpgradeRequest = KeyRequest

export type SocketUpgradeDeps = HttpRpcDeps & {
  hubs: ReadonlyMap<string, SubscriptionHub>
  maxSubscriptions: number
  maxBufferedBytes: number
  /** Messages one connection may have unanswered. */
  maxInFlight: number
}

/** What the server adapter drives: frames in, and the end of the connection. */
export type SocketSession = Pick<RpcSocketSession, 'message' | 'close'>

export type SocketUpgrade =
  | { ok: true; open(port: SocketPort): SocketSession }
  | { ok: false; status: number; body: string; headers: Record<string, string> }

/**
 * A WebSocket upgrade on /ws/v3/{KEY}: the same key, secret, JWT, network and origin/user-agent
 * checks as HTTP. A refusal answers the upgrade request with the HTTP status of docs/compatibility.md §1.
 * The open socket follows its key: a revoked key closes it at the registry's next reload, and a
 * changed one is checked again then and before each message (createSocketAccess).
 */
export async function handleSocketUpgrade(
  deps: SocketUpgradeDeps,
  request: SocketUpgradeRequest,
): Promise<SocketUpgrade> {
  const access = await authorizeKeyRequest(deps, request)
  if (!access.ok) {
    if (!access.key) return refused(deps, access.error)
    return refused(
      deps,
      (await chargeRefusal(deps.meter, access.key.subject, access.networkName, access.error)).error,
    )
  }
  const { key, network, guard, failover } = access
  const hub = deps.hubs.get(network.name)
  if (!hub) return refused(deps, new UnknownNetworkError())
  return {
    ok: true,
    open(port) {
      const cancellation = new Cancellation()
      const keyAccess = createSocketAccess(deps, request, { key, guard, failover })
      const session = openRpcSocket(
        {
          network,
          key,
          guard,
          failover,
          meter: deps.meter,
          filterIds: deps.filterIds,
          cancellation,
          log: deps.log,
        },
        port,
        {
          hub,
          maxSubscriptions: deps.maxSubscriptions,
          maxBufferedBytes: deps.maxBufferedBytes,
          maxBatchSize: deps.maxBatchSize,
          maxJsonDepth: deps.maxJsonDepth,
          maxInFlight: deps.maxInFlight,
          access: keyAccess,
        },
      )
      const stopWatching = deps.keys.onChange(({ changed, removed }) => {
        if (changed.has(request.key) || removed.has(request.key)) void session.recheck()
      })
      // a change announced between the upgrade's checks and now
      void session.recheck()
      return {
        message: session.message,
        close() {
          stopWatching()
          cancellation.cancel()
          session.close()
        },
      }
    },
  }
}

function refused(deps: SocketUpgradeDeps, err: unknown): SocketUpgrade {
  const { payload, httpStatus, headers } = errorOutcome(deps, null, err)
  return { ok: false, status: httpStatus, body: payload.toString(), headers }
}
