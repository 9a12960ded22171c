import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import type { CallEnd, RequestTrace, RequestTracing, SpanAttributes } from '../pipeline/RequestTrace.ts'
import { type Attempt, type CacheUse, CallTrail, type TrailSpans } from '../upstreams/CallTrail.ts'
import type { TraceHeaders } from '../upstreams/createUpstream.ts'

const propagator = new W3CTraceContextPropagator()

/**
 * Requests as OpenTelemetry traces: a server span per request (continuing the caller's
 * `traceparent` and `tracestate`), a child span per step (authenticate, meter) and per call, and
 * under each call a span per upstream attempt (retries, hedges and partners each their own) and one
 * for the cache. Each attempt on our own upstreams sends the node its `traceparent` and the caller's
 * `tracestate`.
 * Contexts are passed by hand, never through a context manager: nothing else in the process is traced.
 */
export function createRequestTracing(tracer: Tracer): RequestTracing {
  return {
    startRequest(transport, traceparent, tracestate) {
      const parent =
        traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(ROOT_CONTEXT, { traceparent, tracestate }, defaultTextMapGetter)
      const name = transport === 'http' ? 'POST /v3/{key}' : 'ws message'
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'jsonrpc', 'network.transport': transport } },
        parent,
      )
      return new TracedRequest(tracer, span, trace.setSpan(parent, span))
    },
  }
}

class TracedRequest implements RequestTrace {
  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly context: Context,
  ) {}

  step(name: string): (attributes?: SpanAttributes) => void {
    const span = this.tracer.startSpan(`tollgate.${name}`, { kind: SpanKind.INTERNAL }, this.context)
    return (attributes) => {
      if (attributes) span.setAttributes(attributes)
      span.end()
    }
  }

  start(method: string, network: string): CallTrail {
    const attributes = { 'rpc.system': 'jsonrpc', 'rpc.method': method, 'tollgate.network': network }
    const span = this.tracer.startSpan(method, { kind: SpanKind.INTERNAL, attributes }, this.context)
    return new CallTrail(new CallSpans(this.tracer, span, trace.setSpan(this.context, span)))
  }

  end(trail: CallTrail, { status, credits, partner, error, clientGone }: CallEnd): void {
    const { span } = trail.spans as CallSpans
    span.setAttributes({
      'tollgate.status': status,
      'tollgate.credits': credits,
      'tollgate.attempts': trail.attempts.length,
      'tollgate.partner': partner,
    })
    if (trail.cache) span.setAttribute('tollgate.cache', trail.cache)
    const answered = trail.answeredBy()
    if (answered) span.setAttribute('tollgate.upstream', answered.upstream)
    // a client going away is not a failure: no error.type, no ERROR status
    if (clientGone) span.setAttribute('tollgate.client_gone', true)
    if (error) {
      span.setAttribute('error.type', error)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end()
  }

  note(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes)
  }

  finish(attributes: SpanAttributes, failed: boolean): void {
    this.span.setAttributes(attributes)
    if (failed) this.span.setStatus({ code: SpanStatusCode.ERROR })
    this.span.end()
  }
}

/** A call's span and its children: the cache, and each attempt (its trace context goes to the node). */
class CallSpans implements TrailSpans {
  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
    private readonly context: Context,
  ) {}

  started(attempt: Attempt): TraceHeaders {
    const span = this.tracer.startSpan(
      'tollgate.upstream',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'tollgate.upstream': attempt.upstream,
          'tollgate.hedge': attempt.hedge,
          'tollgate.partner': attempt.partner,
        },
      },
      this.context,
    )
    attempt.span = span
    // the attempt's traceparent, and the caller's tracestate (the span's, from the trace it continues)
    // passed on as W3C trace context says: its entries as received, in their order
    const headers = {} as TraceHeaders
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter)
    return headers
  }

  ended(attempt: Attempt): void {
    const span = attempt.span as Span
    span.setAttribute('tollgate.outcome', attempt.outcome ?? 'error')
    // a hedge's loser and an attempt stopped because the client went away did not fail
    const { outcome } = attempt
    if (outcome !== 'ok' && outcome !== 'superseded' && outcome !== 'cancelled') {
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end()
  }

  cached(use: CacheUse): void {
    const span = this.tracer.startSpan('tollgate.cache', { kind: SpanKind.INTERNAL }, this.context)
    span.setAttributes({ 'tollgate.cache': use, 'tollgate.cache_hit': use === 'hit' })
    span.end()
  }
}
