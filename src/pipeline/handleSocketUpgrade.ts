import { UnknownNetworkError } from '../errors/errors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import { authorizeKeyRequest, type KeyRequest } from './authorizeKeyRequest.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import type { HttpRpcDeps } from './handleHttpRpc.ts'
import { openRpcSocket, type RpcSocketSession, type SocketPort } from './handleRpcSocket.ts'
import { errorOutcome } from './runRpcRequest.ts'

export type SocketUpgradeRequest = KeyRequest

export type SocketUpgradeDeps = HttpRpcDeps & {
  hubs: ReadonlyMap<string, SubscriptionHub>
  maxSubscriptions: number
  maxBufferedBytes: number
}

export type SocketUpgrade =
  | { ok: true; open(port: SocketPort): RpcSocketSession }
  | { ok: false; status: number; body: string }

/**
 * A WebSocket upgrade on /ws/v3/{KEY}: the same key, secret, JWT, network and origin/user-agent
 * checks as HTTP. A refusal answers the upgrade request with the HTTP status of COMPAT.md §1.
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
      chargeRefusal(deps.meter, access.key.subject, access.networkName, access.error).error,
    )
  }
  const { key, network, guard, failover } = access
  const hub = deps.hubs.get(network.name)
  if (!hub) return refused(deps, new UnknownNetworkError())
  return {
    ok: true,
    open(port) {
      const cancellation = new Cancellation()
      const session = openRpcSocket(
        { network, key, guard, failover, meter: deps.meter, cancellation, log: deps.log },
        port,
        {
          hub,
          maxSubscriptions: deps.maxSubscriptions,
          maxBufferedBytes: deps.maxBufferedBytes,
          maxBatchSize: deps.maxBatchSize,
        },
      )
      return {
        message: session.message,
        close() {
          cancellation.cancel()
          session.close()
        },
      }
    },
  }
}

function refused(deps: SocketUpgradeDeps, err: unknown): SocketUpgrade {
  const { payload, httpStatus } = errorOutcome(deps, null, err)
  return { ok: false, status: httpStatus, body: payload.toString() }
}
