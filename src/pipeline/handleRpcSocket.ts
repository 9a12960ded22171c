import { authorizeCall, type CallGuard } from '../auth/authorize.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { InFlightLimitError, ServerBusyError } from '../errors/limitErrors.ts'
import { NotificationUnpaidError, SlowReaderError } from '../errors/socketErrors.ts'
import { toCloseFrame } from '../errors/toWireError.ts'
import type { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { getMethodSpec } from '../methods/methodTable.ts'
import type { Network } from '../networks/createNetwork.ts'
import { createClientSubscriptions } from '../subscriptions/createClientSubscriptions.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import type { AnswerBudget, AnswerMemory } from '../upstreams/AnswerBudget.ts'
import type { KeyRequest, KeyRequestAccess } from './authorizeKeyRequest.ts'
import type { SocketAccess, SocketAccessResult, SocketGrant } from './createSocketAccess.ts'
import { errorAnswer } from './errorAnswer.ts'
import { handleRpc, type RpcDeps } from './handleRpc.ts'

/** What the session needs of a WebSocket: the server adapter provides it. */
export type SocketPort = {
  /** Queues a text frame; `sent` is called once it is written out (or dropped with the connection). */
  send(payload: RpcPayload, sent?: () => void): void
  /** Sends the close frame (toCloseFrame: its reason already fits one). */
  close(code: number, reason: string): void
  bufferedBytes(): number
}

export type RpcSocketOptions = {
  hub: SubscriptionHub
  maxSubscriptions: number
  maxBufferedBytes: number
  maxBatchSize: number
  maxJsonDepth: number
  /** Messages still being answered; one more is answered -32005 at once, never queued (docs/operations.md). */
  maxInFlight: number
  /** The key as it stands now: read before each message and on `recheck`. */
  access: SocketAccess
  /** Each message's answer budget (at most maxBufferedBytes: a larger answer could never be queued). */
  answers: AnswerMemory
  /** The process's bound on request bodies and messages in flight, shared with HTTP (and its shares). */
  bodies: ByteBulkhead
}

/** The connection's upgrade: what it proved, for which network, and what it was granted. */
export type SocketOpening = {
  keyRequest: KeyRequest
  network: Network
  grant: SocketGrant
  /** Set when the connection ends: its calls' upstream work stops. */
  cancellation: Cancellation
}

export type RpcSocketSession = {
  message(text: string): Promise<void>
  /** The key changed or went away: apply it now, not only with the next message. */
  recheck(): Promise<void>
  /**
   * The connection is to end (its network was replaced, the gateway stops): a message from now on
   * is answered `err` at once, and the connection is closed with `err`'s frame (1001) once the
   * messages already under way are answered.
   */
  leave(err: unknown): void
  close(): void
}

/**
 * One client WebSocket: the same JSON-RPC as HTTP (handleRpc, same credits and errors), plus
 * eth_subscribe / eth_unsubscribe served from the network's shared hub, each notification charged.
 * Each message runs with the key as it stands then; at most `maxInFlight` run at once. A client
 * whose key is revoked or now refuses it, whose balance runs out, or who reads too slowly, is closed
 * with 1008 and a reason. One told to leave answers the messages under way, then closes (1001).
 */
export function openRpcSocket(
  deps: RpcDeps,
  opening: SocketOpening,
  port: SocketPort,
  options: RpcSocketOptions,
): RpcSocketSession {
  let closed = false
  /** Why the connection ended (shut), once it has. */
  let endedBy: unknown
  let inFlight = 0
  /** Why the connection is ending (leave), once it is. */
  let leaving: unknown
  const { network, keyRequest, cancellation } = opening
  const { calls } = network
  let grant = opening.grant

  /** Sends `payload` unless the client has not read enough of what came before to take it. */
  function send(payload: RpcPayload, budget?: AnswerBudget): void {
    const bytes = payload instanceof AnswerParts ? payload.byteLength : payload.length
    if (!closed && port.bufferedBytes() + bytes > options.maxBufferedBytes) shut(new SlowReaderError())
    if (closed) {
      budget?.release()
      return
    }
    port.send(payload, budget && (() => budget.release()))
  }

  /** Ends the connection for `err`, with its close frame (1008 and its message, mostly). */
  function shut(err: unknown): void {
    if (closed) return
    closed = true
    endedBy = err
    subscriptions.stopAll()
    const { code, reason } = toCloseFrame(err)
    port.close(code, reason)
  }

  const subscriptions = createClientSubscriptions({
    hub: options.hub,
    maxSubscriptions: options.maxSubscriptions,
    send,
    // notifications are charged to the key as it stands now; a balance that cannot pay ends the socket
    charge({ method, credits }) {
      const paid = deps.meter.chargeNotification(grant.key.subject, {
        method,
        network: network.name,
        credits,
      })
      if (!paid) shut(new NotificationUnpaidError())
      return paid
    },
  })

  /** Takes the key's current access: the refusal that closed the socket, or undefined. */
  function apply(access: SocketAccessResult): unknown {
    // a connection the client closed has no one to answer
    if (closed) return endedBy ?? new ClientGoneError()
    if (!access.ok) {
      shut(access.refusal)
      return access.refusal
    }
    if (access.grant === grant) return undefined
    grant = access.grant
    // live subscriptions are ongoing use: they end with the socket when one is no longer allowed (the
    // method, or a logs subscription's contracts)
    const refusal = subscriptions.size > 0 ? subscribeRefusal(grant.guard, subscriptions.params()) : undefined
    if (refusal !== undefined) shut(refusal)
    return refusal
  }

  /** What each message runs with: the key as it stands now, on the socket's network. */
  async function access(): Promise<KeyRequestAccess> {
    const refusal = apply(await options.access.current())
    if (refusal !== undefined) return { ok: false, error: refusal }
    const { key, guard, failover } = grant
    return { ok: true, key, network, guard, failover, tokenExpiresMs: undefined }
  }

  async function run(text: string): Promise<void> {
    // held until the answer is written out (send's callback), or dropped
    const answerBudget = options.answers.forRequest(keyRequest.shares, options.maxBufferedBytes)
    let body: RpcPayload
    try {
      const arrival = {
        transport: 'ws',
        keyRequest,
        access,
        body: text,
        cancellation,
        answerBudget,
        subscriptions,
      } as const
      body = (await handleRpc(deps, arrival)).body
    } catch (err) {
      answerBudget.release()
      throw err
    }
    if (body !== '') send(body, answerBudget)
    else answerBudget.release()
  }

  /**
   * A message refused before it runs (over the in-flight limit, or no room for it in the process's
   * bound on messages in flight): each of its calls gets `limit` at once; it costs nothing.
   */
  function refuseMessage(text: string, limit: unknown): void {
    let request: RpcRequest
    try {
      request = parseRpcRequest(text, options)
    } catch {
      send(errorAnswer(deps.log, null, limit).payload)
      return
    }
    const entries = request.isBatch ? request.entries : [request.entry]
    const answers: RpcPayload[] = []
    for (const entry of entries) {
      if (!('call' in entry)) answers.push(errorAnswer(deps.log, entry.id, limit).payload)
      else if (!entry.call.isNotification) answers.push(errorAnswer(deps.log, entry.call.id, limit).payload)
    }
    if (answers.length === 0) return
    send(request.isBatch ? serializeBatch(answers) : (answers[0] as RpcPayload))
  }

  return {
    async message(text) {
      if (closed) return
      if (leaving !== undefined) {
        refuseMessage(text, leaving)
        return
      }
      if (inFlight >= options.maxInFlight) {
        refuseMessage(text, new InFlightLimitError(options.maxInFlight))
        return
      }
      // held, like an HTTP body (and in the same shares), until the message is answered
      const held = options.bodies.holder(keyRequest.shares)
      if (!held.take(text.length)) {
        refuseMessage(text, new ServerBusyError({ logDetails: 'request bodies in flight' }))
        return
      }
      inFlight++
      // counted from its arrival (its network is the socket's), as handleRpc counts it again
      calls.enter()
      try {
        await run(text)
      } catch (err) {
        // a failure no step answered: the client still gets an answer (-32603), never silence
        send(errorAnswer(deps.log, null, err).payload)
      } finally {
        inFlight--
        calls.leave()
        held.release()
        if (leaving !== undefined && inFlight === 0) shut(leaving)
      }
    },
    async recheck() {
      if (!closed) apply(await options.access.current())
    },
    leave(err) {
      leaving ??= err
      if (inFlight === 0) shut(leaving)
    },
    close() {
      closed = true
      subscriptions.stopAll()
    },
  }
}

/** Why a live subscription is no longer allowed by the key's method or contract allowlists, if one is not. */
function subscribeRefusal(guard: CallGuard | undefined, live: Iterable<unknown[]>): unknown {
  if (!guard) return undefined
  const { contracts } = getMethodSpec('eth_subscribe')
  try {
    for (const params of live) authorizeCall(guard, 'eth_subscribe', contracts, params)
    return undefined
  } catch (err) {
    return err
  }
}
