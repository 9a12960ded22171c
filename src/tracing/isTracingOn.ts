import type { TracingConfig } from '../config/tracingSchema.ts'

/**
 * Whether requests are traced: `tracing.enabled` when set; else when an OTLP endpoint is given
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or `tracing.endpoint`).
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off whatever else is set.
 */
export function isTracingOn(config: TracingConfig, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false
  if (config.enabled !== undefined) return config.enabled
  return (
    config.endpoint !== undefined ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  )
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== ''
}
