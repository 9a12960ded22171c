import { samplerNameOf, samplerRatioOf, tracingProtocolOf } from '../config/tracingEnv.ts'
import type { TracingConfig } from '../config/tracingSchema.ts'

/** What the start's `tracing on` line says: where spans go, how, and which traces are kept. */
export type TracingSummary = {
  /** The URL spans are sent to, without the credentials a URL may carry (user, password, query). */
  endpoint: string
  protocol: string
  /** `tracing.sampleRatio` (a parent-based ratio) or the OTEL_TRACES_SAMPLER name. */
  sampler: string
  /** The share of traces kept, for the samplers that take one. */
  ratio?: number
  trustCallerSampling: boolean
}

/** Where the OTLP/HTTP exporter sends spans when nothing names a place. */
const defaultTracesUrl = 'http://localhost:4318/v1/traces'

/**
 * The tracing settings in force, as the exporter and the sampler read them (a config key wins over
 * its variable), safe to log: the export URL loses its credentials, the export headers are not shown.
 */
export function toTracingSummary(config: TracingConfig, env: NodeJS.ProcessEnv): TracingSummary {
  const sampled =
    config.sampleRatio === undefined
      ? samplerOf(env)
      : { sampler: 'parentbased_traceidratio', ratio: config.sampleRatio }
  return {
    endpoint: redactEndpoint(tracesUrlOf(config, env)),
    protocol: tracingProtocolOf(config, env),
    ...sampled,
    trustCallerSampling: config.trustCallerSampling ?? false,
  }
}

/**
 * `tracing.endpoint` with /v1/traces added; else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is; else
 * OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added; else the default (the OTLP exporter's order).
 */
function tracesUrlOf(config: TracingConfig, env: NodeJS.ProcessEnv): string {
  if (config.endpoint) return `${config.endpoint.replace(/\/+$/, '')}/v1/traces`
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  if (specific) return specific
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (base) return `${base.endsWith('/') ? base : `${base}/`}v1/traces`
  return defaultTracesUrl
}

/** The URL with its user, password, query and fragment replaced by `…` (its path is kept). */
function redactEndpoint(url: string): string {
  try {
    const parsed = new URL(url)
    const hidden = parsed.username !== '' || parsed.password !== ''
    const query = parsed.search !== '' || parsed.hash !== '' ? '?…' : ''
    return `${parsed.protocol}//${hidden ? '…@' : ''}${parsed.host}${parsed.pathname}${query}`
  } catch {
    return '(invalid url)'
  }
}

function samplerOf(env: NodeJS.ProcessEnv): { sampler: string; ratio?: number } {
  const sampler = samplerNameOf(env)
  return sampler.endsWith('traceidratio') ? { sampler, ratio: samplerRatioOf(env) } : { sampler }
}
