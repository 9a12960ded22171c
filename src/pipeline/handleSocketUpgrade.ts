import { NetworkReconfiguredError } from '../errors/socketErrors.ts'
import { toCloseFrame } from '../errors/toWireError.ts'
import { UnknownNetworkError } from '../errors/upstreamErrors.ts'
import type { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import { callAt } from '../failsafe/callAt.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import type { AnswerMemory } from '../upstreams/AnswerBudget.ts'
import { authorizeKeyRequest, type KeyRequest } from './authorizeKeyRequest.ts'
import { createSocketAccess } from './createSocketAccess.ts'
import { errorAnswer } from './errorAnswer.ts'
import type { RpcDeps } from './handleRpc.ts'
import { openRpcSocket, type RpcSocketSession, type SocketPort } from './handleRpcSocket.ts'

export type SocketUpgradeRequest = KeyRequest

/** A replaced network's stages: new calls go elsewhere (`leaving`), then it is closed (`stopped`). */
export type RetiredStage = 'leaving' | 'stopped'

export type SocketUpgradeDeps = RpcDeps & {
  hubs: ReadonlyMap<string, SubscriptionHub>
  answers: AnswerMemory
  bodies: ByteBulkhead
  maxSubscriptions: number
  maxBufferedBytes: number
  /** Messages one connection may have unanswered. */
  maxInFlight: number
  /** The clock a JWT's expiry is read on. */
  now: () => number
  /**
   * Tells when a reload replaces the network a connection was opened on (it was removed or rebuilt:
   * `leaving`), and when that network stops (`stopped`): the connection answers the messages it has
   * under way, then is closed with 1001, and the client reconnects to the network now configured.
   */
  onNetworkRetired?: (network: Network, listener: (stage: RetiredStage) => void) => () => void
}

/** What the server adapter drives: frames in, and the end of the connection. */
export type SocketSession = Pick<RpcSocketSession, 'message' | 'leave' | 'close'>

export type SocketUpgrade =
  | { ok: true; open(port: SocketPort): SocketSession }
  /** `headers` as names and values one after the other. */
  | { ok: false; status: number; body: string; headers: string[] }

/**
 * A WebSocket upgrade on /ws/v3/{KEY}: the same key, secret, JWT, network and origin/user-agent
 * checks as HTTP. A refusal answers the upgrade request with the HTTP status of docs/compatibility.md §1.
 * The open socket follows its key: a revoked key closes it at the registry's next reload, and a
 * changed one is checked again then and before each message (createSocketAccess). A socket opened
 * with a JWT is closed when the token expires.
 */
export async function handleSocketUpgrade(
  deps: SocketUpgradeDeps,
  request: SocketUpgradeRequest,
): Promise<SocketUpgrade> {
  const access = await authorizeKeyRequest(deps, request)
  // a request that has not proved what its key requires costs nothing
  if (!access.ok) return refused(deps, access.error)
  const { key, network, guard, failover, tokenExpiresMs } = access
  const hub = deps.hubs.get(network.name)
  if (!hub) return refused(deps, new UnknownNetworkError())
  return {
    ok: true,
    open(port) {
      const cancellation = new Cancellation()
      const keyAccess = createSocketAccess(
        deps,
        request,
        { key, guard, failover },
        { expiresMs: tokenExpiresMs, now: deps.now },
      )
      const session = openRpcSocket(
        deps,
        { keyRequest: request, network, grant: { key, guard, failover }, cancellation },
        port,
        {
          hub,
          maxSubscriptions: deps.maxSubscriptions,
          maxBufferedBytes: deps.maxBufferedBytes,
          maxBatchSize: deps.maxBatchSize,
          maxJsonDepth: deps.maxJsonDepth,
          maxInFlight: deps.maxInFlight,
          access: keyAccess,
          answers: deps.answers,
          bodies: deps.bodies,
        },
      )
      const stopWatching = deps.keys.onChange(({ changed, removed }) => {
        if (changed.has(request.key) || removed.has(request.key)) void session.recheck()
      })
      // a change announced between the upgrade's checks and now
      void session.recheck()
      const stopRetired = deps.onNetworkRetired?.(network, (stage) => {
        if (stage === 'leaving') return session.leave(new NetworkReconfiguredError())
        // calls that outlasted the network's stop
        const { code, reason } = toCloseFrame(new NetworkReconfiguredError())
        port.close(code, reason)
      })
      // the token's end closes the socket even if the client sends nothing more
      const stopExpiry =
        tokenExpiresMs === undefined
          ? undefined
          : callAt(tokenExpiresMs, () => void session.recheck(), deps.now)
      return {
        message: session.message,
        leave: session.leave,
        close() {
          stopWatching()
          stopRetired?.()
          stopExpiry?.()
          cancellation.cancel()
          session.close()
        },
      }
    },
  }
}

function refused(deps: SocketUpgradeDeps, err: unknown): SocketUpgrade {
  const { payload, httpStatus, headers } = errorAnswer(deps.log, null, err)
  return { ok: false, status: httpStatus, body: payload.toString(), headers }
}
