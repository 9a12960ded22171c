import { trace } from '@opentelemetry/api'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import type { TracingConfig } from '../config/tracingSchema.ts'
import type { RequestTracing } from '../pipeline/RequestTrace.ts'
import { createRequestTracing } from './createRequestTracing.ts'

export type Tracing = {
  tracing: RequestTracing
  /** Exports what is still queued, then stops (SIGTERM: after the last request is answered). */
  close(): Promise<void>
}

/**
 * The OpenTelemetry SDK for tollgate's traces, loaded (by a dynamic import) only when tracing is on:
 * spans batched and sent over OTLP/HTTP, protobuf or JSON (OTEL_EXPORTER_OTLP_PROTOCOL), to the
 * endpoint and with the headers the OTEL_EXPORTER_OTLP_* variables give; sampled as
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG say (default parentbased_always_on). A config key
 * that is set wins over its variable. Each process (each worker) exports its own spans.
 */
export function startTracing(config: TracingConfig, env: NodeJS.ProcessEnv = process.env): Tracing {
  const protocol =
    config.protocol ||
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
    'http/protobuf'
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
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
  return { tracing: createRequestTracing(tracer), close: () => provider.shutdown() }
}

/** `tracing.sampleRatio` (parent-based), else OTEL_TRACES_SAMPLER and its argument. */
function samplerOf(config: TracingConfig, env: NodeJS.ProcessEnv): Sampler {
  if (config.sampleRatio !== undefined) {
    return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) })
  }
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on'
  const ratio = ratioOf(env.OTEL_TRACES_SAMPLER_ARG)
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    default:
      throw new Error(`OTEL_TRACES_SAMPLER ${name} is not one tollgate offers`)
  }
}

/** OTEL_TRACES_SAMPLER_ARG as a ratio: 1 when unset or not a number within 0..1. */
function ratioOf(arg: string | undefined): number {
  const ratio = arg === undefined ? Number.NaN : Number(arg)
  return ratio >= 0 && ratio <= 1 ? ratio : 1
}
