import WebSocket from 'ws'
import { UpstreamTimeoutError } from '../errors/upstreamErrors.ts'
import { type BackoffPolicy, getBackoffMs } from '../failsafe/getBackoffMs.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'
import { redactUrl } from './redactUrl.ts'

export type UpstreamSocket = {
  /**
   * A JSON-RPC call over the socket; rejects if the socket drops first, or with UpstreamTimeoutError
   * when no answer comes within `requestTimeoutMs` (the connection is then dropped for the next URL).
   */
  request<T>(method: string, params: unknown[]): Promise<T>
  /**
   * Keeps an upstream subscription alive: subscribes now (or once connected) and again after every
   * reconnect. `onNotification` gets each result; `onResubscribed` runs after a reconnect.
   */
  subscribe(
    params: unknown[],
    onNotification: (result: unknown) => void,
    onResubscribed?: () => void,
  ): () => void
  /** Whether the socket is connected now (its subscriptions are live or being made again). */
  connected(): boolean
  close(): void
}

export type UpstreamSocketOptions = {
  urls: string[]
  onError?: (err: unknown, label: string) => void
  /** First reconnect delay; doubles up to 2 s, each lengthened by up to half at random (getBackoffMs). */
  reconnectMs?: number
  /** How long one request may wait for its answer; default 5 s, as upstreams.attemptTimeoutMs. */
  requestTimeoutMs?: number
}

/** One upstream attempt's wait, as upstreams.attemptTimeoutMs defaults to (docs/config.md). */
const defaultRequestTimeoutMs = 5_000

/** How a request over the socket ended: its result, or why it has none. */
type Outcome = { result: unknown } | { error: Error }
type Subscription = {
  params: unknown[]
  onNotification: (result: unknown) => void
  onResubscribed: (() => void) | undefined
  upstreamId: string | undefined
}

/**
 * One WebSocket to an upstream, moving on to the next URL and reconnecting with backoff when it
 * drops or stops answering, and restoring every subscription on the new connection. Subscriptions
 * are shared by the gateway's clients above this, so one upstream subscription serves them all.
 */
export function createUpstreamSocket(options: UpstreamSocketOptions): UpstreamSocket {
  const { urls, requestTimeoutMs = defaultRequestTimeoutMs } = options
  let socket: WebSocket | undefined
  let open = false
  let closed = false
  let nextId = 1
  let urlIndex = 0
  // reconnects since the socket was last open: the pause before the next one grows with them
  let reconnects = 0
  const reconnect: BackoffPolicy = {
    baseMs: options.reconnectMs ?? 100,
    factor: 2,
    maxMs: 2_000,
    jitter: 0.5,
  }
  let connectedBefore = false
  const pending = new Map<number, (outcome: Outcome) => void>()
  const subscriptions = new Set<Subscription>()
  const byUpstreamId = new Map<string, Subscription>()

  function connect(): void {
    if (closed) return
    const url = urls[urlIndex % urls.length] as string
    const label = redactUrl(url)
    const ws = new WebSocket(url, { perMessageDeflate: false })
    socket = ws
    ws.on('open', () => {
      open = true
      reconnects = 0
      const resubscribing = connectedBefore
      connectedBefore = true
      for (const subscription of subscriptions) void establish(subscription, resubscribing)
    })
    ws.on('message', (data) => onMessage(data.toString()))
    ws.on('error', (err) => options.onError?.(err, label))
    ws.on('close', () => {
      open = false
      socket = undefined
      byUpstreamId.clear()
      for (const subscription of subscriptions) subscription.upstreamId = undefined
      endPending()
      if (closed) return
      urlIndex++
      setTimeout(connect, getBackoffMs(++reconnects, reconnect)).unref()
    })
  }

  /** Ends every request still waiting: the socket they were sent on is gone (or going). */
  function endPending(): void {
    const waiting = [...pending.values()]
    pending.clear()
    for (const settle of waiting) settle({ error: new Error('upstream socket closed') })
  }

  function onMessage(text: string): void {
    let message: {
      id?: number
      result?: unknown
      error?: { message?: string }
      method?: string
      params?: unknown
    }
    try {
      message = JSON.parse(text)
    } catch {
      return
    }
    if (message.method === 'eth_subscription') {
      const { subscription, result } = (message.params ?? {}) as { subscription?: string; result?: unknown }
      if (subscription !== undefined) byUpstreamId.get(subscription)?.onNotification(result)
      return
    }
    if (typeof message.id !== 'number') return
    const settle = pending.get(message.id)
    if (!settle) return
    pending.delete(message.id)
    settle(
      message.error
        ? { error: new Error(message.error.message ?? 'upstream error') }
        : { result: message.result },
    )
  }

  function request<T>(method: string, params: unknown[]): Promise<T> {
    const ws = socket
    if (!ws || !open) return Promise.reject(new Error('upstream socket not connected'))
    const id = nextId++
    return withTimeout<Outcome>(
      (settle) => {
        pending.set(id, settle)
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
      },
      requestTimeoutMs,
      () => {
        // an upstream that does not answer is failed over like one that dropped: the close handler
        // ends the other waiting requests and moves to the next URL, where subscriptions are restored
        pending.delete(id)
        if (socket === ws) ws.terminate()
        return { error: new UpstreamTimeoutError({ logDetails: `${method} over the upstream WebSocket` }) }
      },
    ).then((outcome) => {
      if ('error' in outcome) throw outcome.error
      return outcome.result as T
    })
  }

  async function establish(subscription: Subscription, resubscribing: boolean): Promise<void> {
    try {
      const id = await request<string>('eth_subscribe', subscription.params)
      if (!subscriptions.has(subscription)) {
        void request('eth_unsubscribe', [id]).catch(() => undefined)
        return
      }
      subscription.upstreamId = id
      byUpstreamId.set(id, subscription)
      if (resubscribing) subscription.onResubscribed?.()
    } catch (err) {
      options.onError?.(err, 'subscribe')
    }
  }

  connect()

  return {
    request,
    subscribe(params, onNotification, onResubscribed) {
      const subscription: Subscription = { params, onNotification, onResubscribed, upstreamId: undefined }
      subscriptions.add(subscription)
      if (open) void establish(subscription, false)
      return () => {
        subscriptions.delete(subscription)
        if (subscription.upstreamId !== undefined) {
          byUpstreamId.delete(subscription.upstreamId)
          void request('eth_unsubscribe', [subscription.upstreamId]).catch(() => undefined)
        }
      }
    },
    connected: () => open,
    close() {
      closed = true
      // not left to the close handshake: their timers would hold the process for requestTimeoutMs
      endPending()
      socket?.close()
    },
  }
}
