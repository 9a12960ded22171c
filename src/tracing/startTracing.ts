import process from 'node:process'
import { type Context, type Link, type SpanKind, trace } from '@opentelemetry/api'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import type { Logger } from 'pino'
import {
  isProtocol,
  isSamplerName,
  samplerNameOf,
  samplerRatioOf,
  tracingProtocolOf,
} from '../config/tracingEnv.ts'
import type { TracingConfig } from '../config/tracingSchema.ts'
import type { RequestTracing } from '../pipeline/RequestTrace.ts'
import { createRequestTracing } from './createRequestTracing.ts'
import { toTracingSummary } from './toTracingSummary.ts'

export type Tracing = {
  tracing: RequestTracing
  /**
   * Exports what is still queued, then stops (SIGTERM: after the last request is answered). Never
   * fails: spans not sent within 2 s (a collector down or wrong) are dropped with a warning.
   */
  close(): Promise<void>
}

/** How long a stop waits for the last spans to be exported. */
const closeWaitMs = 2_000

/**
 * The OpenTelemetry SDK for tollgate's traces, loaded (by a dynamic import) only when tracing is on:
 * spans batched and sent over OTLP/HTTP, protobuf or JSON (OTEL_EXPORTER_OTLP_PROTOCOL), to the
 * endpoint and with the headers the OTEL_EXPORTER_OTLP_* variables give; sampled as
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG say (default parentbased_always_on). A config key
 * that is set wins over its variable. Each process (each worker) exports its own spans, and says so
 * in one `tracing on` info line (where to, how, which traces are kept).
 */
export function startTracing(
  config: TracingConfig,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Tracing {
  // checked with the config (loadConfig); checked again for a caller that did not load it
  const protocol = tracingProtocolOf(config, env)
  if (!isProtocol(protocol)) {
    throw new Error(`OTLP protocol ${protocol} is not offered: use http/protobuf or http/json`)
  }
  const url = config.endpoint && `${config.endpoint.replace(/\/+$/, '')}/v1/traces`
  const exporterConfig = url === undefined ? {} : { url }
  const exporter =
    protocol === 'http/json' ? new JsonExporter(exporterConfig) : new ProtobufExporter(exporterConfig)
  const detected = detectResources({ detectors: [envDetector] })
  const resource = resourceFromAttributes({ 'service.name': 'tollgate', 'process.pid': process.pid })
    .merge(detected)
    .merge(config.serviceName ? resourceFromAttributes({ 'service.name': config.serviceName }) : null)
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config, env),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  })
  const tracer = provider.getTracer('tollgate')
  // nothing else in the process reads the global provider; set for libraries that would
  trace.setGlobalTracerProvider(provider)
  const serviceName = resource.attributes['service.name']
  log.info({ ...toTracingSummary(config, env), serviceName }, 'tracing on: spans exported over OTLP')
  const close = async () => {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not exported within ${closeWaitMs} ms`)), closeWaitMs)
    })
    try {
      await Promise.race([provider.shutdown(), late])
    } catch (err) {
      log.warn({ err }, 'traces not exported at stop')
    } finally {
      clearTimeout(timer)
    }
  }
  return { tracing: createRequestTracing(tracer), close }
}

/**
 * `tracing.sampleRatio`, else OTEL_TRACES_SAMPLER and its argument. A parent-based sampler follows
 * the parent of a span inside tollgate's own trace; a caller's `traceparent` flag is untrusted (it
 * comes before authentication, from anyone): a trace continued from a caller is sampled at our own
 * ratio, drawn at random (a caller picks its trace id, so a trace-id ratio would be theirs to game),
 * unless `tracing.trustCallerSampling` is true.
 * @internal exported for its tests
 */
export function samplerOf(config: TracingConfig, env: NodeJS.ProcessEnv): Sampler {
  const parentBased = (root: Sampler, ratio: number) => {
    if (config.trustCallerSampling) return new ParentBasedSampler({ root })
    const ours = new RandomRatioSampler(ratio)
    return new ParentBasedSampler({ root, remoteParentSampled: ours, remoteParentNotSampled: ours })
  }
  if (config.sampleRatio !== undefined) {
    return parentBased(new TraceIdRatioBasedSampler(config.sampleRatio), config.sampleRatio)
  }
  const name = samplerNameOf(env)
  if (!isSamplerName(name)) throw new Error(`OTEL_TRACES_SAMPLER ${name} is not one tollgate offers`)
  const ratio = samplerRatioOf(env)
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_off':
      return parentBased(new AlwaysOffSampler(), 0)
    case 'parentbased_traceidratio':
      return parentBased(new TraceIdRatioBasedSampler(ratio), ratio)
    case 'parentbased_always_on':
      return parentBased(new AlwaysOnSampler(), 1)
  }
}

/** Keeps `ratio` of the spans it is asked about, by a random draw rather than by trace id. */
class RandomRatioSampler implements Sampler {
  constructor(private readonly ratio: number) {}

  shouldSample(
    _context: Context,
    _traceId: string,
    _name: string,
    _kind: SpanKind,
    _attributes: unknown,
    _links: Link[],
  ): SamplingResult {
    const kept = this.ratio > 0 && Math.random() < this.ratio
    return { decision: kept ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD }
  }

  toString(): string {
    return `RandomRatioSampler{${this.ratio}}`
  }
}
