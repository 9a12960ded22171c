import type { CallTrail } from '../upstreams/CallTrail.ts'

export type SpanAttributes = Record<string, string | number | boolean>

/**
 * How a call ended, for its trail's reader (a trace's call span): `error` is the failure's name;
 * `clientGone` when the client went away first (not a failure: no `error`).
 */
export type CallEnd = {
  status: number
  credits: number
  partner: boolean
  error: string | undefined
  clientGone: boolean
}

/**
 * The trails of a request's calls: made only when something reads them (the route header, a trace),
 * so the request path pays one check when nothing does.
 */
export type CallTrails = {
  /** A call of `method` on `network` begins: its trail. */
  start(method: string, network: string): CallTrail
  /** It ended (a trace's call span ends with it). */
  end(trail: CallTrail, end: CallEnd): void
}

/**
 * One request's trace (src/tracing/ makes them when tracing is on): a span for the request, one for
 * each of its steps and calls, and the calls' attempts under them.
 */
export type RequestTrace = CallTrails & {
  /** A step of the request (`authenticate`, `meter`), begun now: ended by what it returns. */
  step(name: string): (attributes?: SpanAttributes) => void
  /** What is known of the request (its key, network, credits): on its span. */
  note(attributes: SpanAttributes): void
  /** The request ended: its span's last attributes. */
  finish(attributes: SpanAttributes, failed: boolean): void
}

/** Starts requests' traces: continuing the caller's W3C trace context when it sends one. */
export type RequestTracing = {
  startRequest(
    transport: 'http' | 'ws',
    traceparent: string | undefined,
    tracestate: string | undefined,
  ): RequestTrace
}
