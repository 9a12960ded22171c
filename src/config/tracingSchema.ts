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
    /** The share of new traces kept, 0..1; a caller's sampled flag decides for the traces it continues. */
    sampleRatio: z.number().min(0).max(1).optional(),
    /** The service.name resource attribute, as OTEL_SERVICE_NAME (default tollgate). */
    serviceName: z.string().min(1).optional(),
  })
  .prefault({})

export type TracingConfig = z.infer<typeof tracingSchema>
