import { type Dispatcher, Pool } from 'undici'
import type { UpstreamConfig } from '../config/configSchema.ts'
import type { AnswerBudget } from './AnswerBudget.ts'
import { redactUrl } from './redactUrl.ts'

/**
 * The W3C trace context an attempt's request carries to the node: our `traceparent` (the attempt's
 * span), and the caller's `tracestate` when the trace continues one that came with it.
 */
export type TraceHeaders = { traceparent: string; tracestate?: string }

export type UpstreamResponse = { status: number; body: Buffer }

export type PostOptions = {
  /** Receives the function that aborts this request, once it is under way. */
  onStart?: (abort: (reason: Error) => void) => void
  /** Per-request inactivity timeout (headers, then body); 0 leaves it to the caller. */
  timeoutMs?: number
  /** The W3C trace context sent to the node with this request (a traced call's attempt). */
  traceHeaders?: TraceHeaders | undefined
  /** What the client's request may hold of answers: the body is refused (aborted) past it. */
  budget?: AnswerBudget | undefined
}

/** How one request ended: the whole answer, or the connection error or abort that stopped it. */
export type PostResult = { response: UpstreamResponse } | { error: Error & { code?: string } }

export type Upstream = {
  /** Printable name: the configured name, or the redacted URL. Never the credentials. */
  label: string
  /** The configured name, if any: what clients and traces may be shown (never the URL). */
  name?: string | undefined
  /** POSTs one JSON-RPC body and collects the answer; rejects on connection errors and aborts. */
  post(body: string | Buffer, options?: PostOptions): Promise<UpstreamResponse>
  /** The same without a promise, for the request path: `done` is called once, with how it ended. */
  dispatch(body: string | Buffer, options: PostOptions, done: (result: PostResult) => void): void
  close(): Promise<void>
}

export type CreateUpstreamOptions = {
  connections: number
  maxResponseBytes: number
  keepAliveTimeoutMs?: number
}

/** One node behind a keep-alive connection pool, driven through undici's dispatch API (no streams). */
export function createUpstream(config: UpstreamConfig, options: CreateUpstreamOptions): Upstream {
  const url = new URL(config.url)
  const path = `${url.pathname}${url.search}`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
  }
  const pool = new Pool(url.origin, {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  })

  function dispatch(
    body: string | Buffer,
    { onStart, timeoutMs = 0, budget, traceHeaders }: PostOptions,
    done: (result: PostResult) => void,
  ) {
    const handler = new CollectingHandler(done, options.maxResponseBytes, onStart, budget)
    pool.dispatch(
      {
        path,
        method: 'POST',
        headers: traceHeaders === undefined ? headers : { ...headers, ...traceHeaders },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      handler,
    )
  }

  return {
    label: config.name ?? redactUrl(config.url),
    name: config.name,
    post(body, postOptions = {}) {
      return new Promise((resolve, reject) => {
        dispatch(body, postOptions, (result) => {
          if ('response' in result) resolve(result.response)
          else reject(result.error)
        })
      })
    },
    dispatch,
    close: () => pool.close(),
  }
}

/**
 * Collects a response body into one Buffer, refusing answers larger than `maxBytes` or than the
 * request's answer budget allows (aborted with the budget's refusal: TollgateErrors). It implements
 * undici's own handler interface (onConnect ... onComplete, the one its `request()` uses): a handler
 * of the newer interface (onRequestStart ...) is wrapped by undici in two more objects per request
 * and given the response headers parsed into an object, which nothing here reads.
 */
class CollectingHandler implements Dispatcher.DispatchHandler {
  #status = 0
  #size = 0
  /** Made for the first chunk (most answers have one): an empty list would be given room for 16. */
  #chunks: Buffer[] | undefined
  #abort: ((reason: Error) => void) | undefined

  constructor(
    private readonly done: (result: PostResult) => void,
    private readonly maxBytes: number,
    private readonly onStart: PostOptions['onStart'],
    private readonly budget: AnswerBudget | undefined,
  ) {}

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort
    this.onStart?.(abort)
  }

  onHeaders(statusCode: number): boolean {
    this.#status = statusCode
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.#size + chunk.length > this.maxBytes) {
      this.#abort?.(new Error(`upstream answer larger than ${this.maxBytes} bytes`))
      return false
    }
    const refusal = this.budget?.take(chunk.length)
    if (refusal) {
      this.#abort?.(refusal)
      return false
    }
    this.#size += chunk.length
    if (this.#chunks) this.#chunks.push(chunk)
    else this.#chunks = [chunk]
    return true
  }

  onComplete(): void {
    const chunks = this.#chunks
    const body = chunks?.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks ?? [], this.#size)
    this.done({ response: { status: this.#status, body } })
  }

  onError(error: Error): void {
    // what came in of an answer that will not be given is not held
    this.budget?.giveBack(this.#size)
    this.#chunks = undefined
    this.done({ error })
  }
}
