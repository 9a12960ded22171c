import { authenticate } from '../auth/authenticate.ts'
import { authorizeRequest } from '../auth/authorize.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { InvalidKeyError, MissingKeyError, TollgateError, UnknownNetworkError } from '../errors/errors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import type { HttpRpcDeps } from './handleHttpRpc.ts'
import { openRpcSocket, type RpcSocketSession, type SocketPort } from './handleRpcSocket.ts'
import { errorOutcome } from './runRpcRequest.ts'

export type SocketUpgradeRequest = {
  key: string
  networkName: string | undefined
  host: string | undefined
  authorization: string | undefined
  origin: string | undefined
  userAgent: string | undefined
}

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
  if (request.key === '') return refused(deps, new MissingKeyError())
  const key = deps.keys.findActiveKey(request.key)
  if (!key) return refused(deps, new InvalidKeyError())
  const network = deps.networks.resolve(request.networkName, request.host)
  try {
    const auth = await authenticate(key, request.authorization, deps)
    if (!network) throw new UnknownNetworkError()
    const guard = authorizeRequest(key, auth, {
      networkName: network.name,
      origin: request.origin,
      userAgent: request.userAgent,
    })
    const hub = deps.hubs.get(network.name)
    if (!hub) throw new UnknownNetworkError()
    return {
      ok: true,
      open(port) {
        const cancellation = new Cancellation()
        const session = openRpcSocket(
          { network, key, guard, meter: deps.meter, cancellation, log: deps.log },
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
  } catch (err) {
    if (!(err instanceof TollgateError) || err.httpStatus === 401) return refused(deps, err)
    return chargedRefusal(deps, key, network?.name ?? '(unknown)', err)
  }
}

function refused(deps: SocketUpgradeDeps, err: unknown): SocketUpgrade {
  const { payload, httpStatus } = errorOutcome(deps, null, err)
  return { ok: false, status: httpStatus, body: payload.toString() }
}

/** Refused input costs 5 credits (COMPAT.md §2), unless even those cannot be paid. */
function chargedRefusal(
  deps: SocketUpgradeDeps,
  key: KeyEntry,
  network: string,
  err: unknown,
): SocketUpgrade {
  return refused(deps, chargeRefusal(deps.meter, key.subject, network, err).error)
}
