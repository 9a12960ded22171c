import { Buffer } from 'node:buffer'
import { type Dispatcher, Pool } from 'undici'
import type { UpstreamConfig } from '../config/configSchema.ts'
import { TurnBudget } from '../failsafe/TurnBudget.ts'
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
 * Bytes of answers the process takes in from every upstream in one turn of the event loop: past it,
 * an answer's connection waits for a later turn, so that many large answers coming in at once
 * hold the loop from other clients no longer than this much does.
 */
const intake = new TurnBudget(1024 * 1024)

/**
 * Collects a response body into one Buffer, refusing answers larger than `maxBytes` or than the
 * request's answer budget allows (aborted with the budget's refusal: TollgateErrors). A body of more
 * than one chunk is copied into its buffer chunk by chunk as it comes in (sized by its
 * Content-Length, else grown by doubling), never joined at the end: one copy of a large answer at
 * once would hold the event loop from every other client; and what every upstream sends is taken
 * in a share at a turn (intake). It implements undici's own handler interface (onConnect ...
 * onComplete, the one its `request()` uses): a handler of the newer interface (onRequestStart ...)
 * is wrapped by undici in two more objects per request and given the response headers parsed into
 * an object, which nothing here reads.
 */
class CollectingHandler implements Dispatcher.DispatchHandler {
  #status = 0
  #size = 0
  /** The response's headers, names and values in turn: its Content-Length is read if a second chunk comes. */
  #rawHeaders: Buffer[] | undefined
  /** The first chunk, kept as it is: most answers have no other. */
  #first: Buffer | undefined
  /** Once a second chunk comes: every byte so far, in a buffer with room for more. */
  #collected: Buffer | undefined
  #abort: ((reason: Error) => void) | undefined
  /** Reads the rest of the body again, after a pause for the intake's next turn. */
  #resume: () => void = noResume

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

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.#status = statusCode
    this.#resume = resume
    this.#rawHeaders = rawHeaders
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
    if (this.#first === undefined) this.#first = chunk
    else this.#append(chunk)
    this.#size += chunk.length
    // false pauses the connection until the intake's next turn
    return intake.take(chunk.length, this.#resume)
  }

  /** Copies `chunk` after the bytes collected so far, making room first when there is too little. */
  #append(chunk: Buffer): void {
    const needed = this.#size + chunk.length
    let collected = this.#collected
    if (collected === undefined || collected.length < needed) {
      // first the length the node announced (read now: most answers never get here), then doubled
      const room =
        collected === undefined
          ? (announcedBytesOf(this.#rawHeaders, this.maxBytes) ?? 0)
          : 2 * collected.length
      const bytes = Math.min(this.maxBytes, Math.max(needed, room))
      const grown = Buffer.allocUnsafe(bytes)
      if (collected === undefined) (this.#first as Buffer).copy(grown)
      else collected.copy(grown, 0, 0, this.#size)
      this.#collected = collected = grown
    }
    chunk.copy(collected, this.#size)
  }

  onComplete(): void {
    const body = this.#collected?.subarray(0, this.#size) ?? this.#first ?? Buffer.alloc(0)
    this.done({ response: { status: this.#status, body } })
  }

  onError(error: Error): void {
    // what came in of an answer that will not be given is not held
    this.budget?.giveBack(this.#size)
    this.#first = undefined
    this.#collected = undefined
    this.done({ error })
  }
}

/** The body's length as a response's raw headers announce it; undefined when they do not, or past `maxBytes`. */
function announcedBytesOf(rawHeaders: Buffer[] | undefined, maxBytes: number): number | undefined {
  if (rawHeaders === undefined) return undefined
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as Buffer
    if (name.length !== contentLength.length || name.toString('latin1').toLowerCase() !== contentLength)
      continue
    const bytes = Number((rawHeaders[index + 1] as Buffer).toString('latin1'))
    return Number.isSafeInteger(bytes) && bytes >= 0 && bytes <= maxBytes ? bytes : undefined
  }
  return undefined
}

const contentLength = 'content-length'

function noResume(): void {}
