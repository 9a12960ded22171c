import { z } from 'zod'

/**
 * OpenTelemetry traces (docs/observability.md#traces). Every key is optional: what a key leaves
 * unset, the standard OTEL_* environment variables say, and a key that is set wins over them.
 */
export const tracingSchema = z
  .strictObject({
    /**
     * true: traces are exported; false: never, whatever the environment says. Unset: on when
     * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
     */
    enabled: z.boolean().optional(),
    /** The OTLP/HTTP base URL (`/v1/traces` is added), as OTEL_EXPORTER_OTLP_ENDPOINT. */
    endpoint: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
    /** As OTEL_EXPORTER_OTLP_PROTOCOL (default http/protobuf); grpc is not offered. */
    protocol: z.enum(['http/protobuf', 'http/json']).optional(),
    /**
     * The share of traces kept, 0..1, the ones continued from a caller's traceparent too (its
     * sampled flag is not trusted unless trustCallerSampling).
     */
    sampleRatio: z.number().min(0).max(1).optional(),
    /** true: a caller's traceparent sampled flag decides for the trace it continues (default false). */
    trustCallerSampling: z.boolean().optional(),
    /** The service.name resource attribute, as OTEL_SERVICE_NAME (default tollgate). */
    serviceName: z.string().min(1).optional(),
  })
  .prefault({})

export type TracingConfig = z.infer<typeof tracingSchema>
