import { authorizeCall, type CallGuard } from '../auth/authorize.ts'
import { keyRef } from '../auth/keyRef.ts'
import { InFlightLimitError, ServerBusyError } from '../errors/limitErrors.ts'
import { NotificationUnpaidError, SlowReaderError } from '../errors/socketErrors.ts'
import { toCloseFrame } from '../errors/toWireError.ts'
import type { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { parseRpcRequest } from '../jsonrpc/parseRpcRequest.ts'
import { serializeBatch } from '../jsonrpc/serialize.ts'
import type { RpcPayload, RpcRequest } from '../jsonrpc/types.ts'
import { getMethodSpec } from '../methods/methodTable.ts'
import { createClientSubscriptions } from '../subscriptions/createClientSubscriptions.ts'
import type { SubscriptionHub } from '../subscriptions/createSubscriptionHub.ts'
import type { AnswerBudget, AnswerMemory } from '../upstreams/AnswerBudget.ts'
import { chargeRefusal } from './chargeRefusal.ts'
import type { SocketAccess, SocketAccessResult, SocketGrant } from './createSocketAccess.ts'
import type { RequestTracing } from './RequestTrace.ts'
import type { RpcContext } from './rpcContext.ts'
import { errorOutcome, runRpcRequest } from './runRpcRequest.ts'

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
  /** The process's bound on request bodies and messages in flight, shared with HTTP. */
  bodies: ByteBulkhead
  /** Each message is a trace of its own when tracing is on (a message carries no trace context). */
  tracing: RequestTracing | undefined
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
 * One client WebSocket: the same JSON-RPC as HTTP (runRpcRequest, same credits and errors), plus
 * eth_subscribe / eth_unsubscribe served from the network's shared hub, each notification charged.
 * Each message runs with the key as it stands then; at most `maxInFlight` run at once. A client
 * whose key is revoked or now refuses it, whose balance runs out, or who reads too slowly, is closed
 * with 1008 and a reason. One told to leave answers the messages under way, then closes (1001).
 */
export function openRpcSocket(
  base: Omit<RpcContext, 'subscriptions' | 'answerBudget'>,
  port: SocketPort,
  options: RpcSocketOptions,
): RpcSocketSession {
  let closed = false
  let inFlight = 0
  /** Why the connection is ending (leave), once it is. */
  let leaving: unknown
  const { calls } = base.network
  let grant: SocketGrant = { key: base.key, guard: base.guard, failover: base.failover }

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
      const paid = base.meter.chargeNotification(grant.key.subject, {
        method,
        network: base.network.name,
        credits,
      })
      if (!paid) shut(new NotificationUnpaidError())
      return paid
    },
  })

  let ctx: Omit<RpcContext, 'answerBudget'> = { ...base, subscriptions }

  /** Takes the key's current access: closes the socket on a refusal; false then. */
  function apply(access: SocketAccessResult): boolean {
    if (closed) return false
    if (!access.ok) {
      shut(access.refusal)
      return false
    }
    if (access.grant === grant) return true
    grant = access.grant
    ctx = { ...ctx, ...grant }
    // live subscriptions are ongoing use: they end with the socket when one is no longer allowed (the
    // method, or a logs subscription's contracts)
    const refusal = subscriptions.size > 0 ? subscribeRefusal(grant.guard, subscriptions.params()) : undefined
    if (refusal === undefined) return true
    shut(refusal)
    return false
  }

  async function run(text: string): Promise<void> {
    if (!apply(await options.access.current())) return
    const current = ctx
    let request: RpcRequest
    try {
      request = parseRpcRequest(text, options)
    } catch (err) {
      const { error } = await chargeRefusal(current.meter, current.key.subject, current.network.name, err)
      send(errorOutcome(current, null, error).payload)
      return
    }
    // held until the answer is written out (send's callback), or dropped
    const answerBudget = options.answers.forRequest(options.maxBufferedBytes)
    let body: RpcPayload
    const trace = options.tracing?.startRequest('ws', undefined, undefined)
    try {
      const outcome = await runRpcRequest({ ...current, answerBudget, trails: trace, trace }, request)
      trace?.finish(
        {
          'tollgate.key': keyRef(current.key.apiKey.key),
          'tollgate.network': current.network.name,
          'tollgate.credits': outcome.settlement?.chargedCredits ?? 0,
        },
        outcome.status >= 500,
      )
      body = outcome.body
    } catch (err) {
      trace?.finish({}, true)
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
      send(errorOutcome(base, null, limit).payload)
      return
    }
    const entries = request.isBatch ? request.entries : [request.entry]
    const answers: RpcPayload[] = []
    for (const entry of entries) {
      if (!('call' in entry)) answers.push(errorOutcome(base, entry.id, limit).payload)
      else if (!entry.call.isNotification) answers.push(errorOutcome(base, entry.call.id, limit).payload)
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
      // held, like an HTTP body, until the message is answered
      const held = options.bodies.holder()
      if (!held.take(text.length)) {
        refuseMessage(text, new ServerBusyError({ logDetails: 'request bodies in flight' }))
        return
      }
      inFlight++
      calls.enter()
      try {
        await run(text)
      } catch (err) {
        // a failure no step answered: the client still gets an answer (-32603), never silence
        send(errorOutcome(ctx, null, err).payload)
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
