import process from 'node:process'
import type { TracingConfig } from './tracingSchema.ts'

/** The OTLP protocols tollgate exports over (grpc is not offered). */
const protocols = ['http/protobuf', 'http/json'] as const
export type TracingProtocol = (typeof protocols)[number]

/** The samplers OTEL_TRACES_SAMPLER may name. */
const samplerNames = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const
export type SamplerName = (typeof samplerNames)[number]

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

/**
 * `tracing.protocol`, else OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
 * (default http/protobuf); the name of a protocol tollgate does not offer when that is what is set.
 */
export function tracingProtocolOf(config: TracingConfig, env: NodeJS.ProcessEnv): string {
  return (
    config.protocol ||
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
    'http/protobuf'
  )
}

/** OTEL_TRACES_SAMPLER, lower-cased (default parentbased_always_on). */
export function samplerNameOf(env: NodeJS.ProcessEnv): string {
  return env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on'
}

/** OTEL_TRACES_SAMPLER_ARG as a ratio: 1 when unset or not a number within 0..1. */
export function samplerRatioOf(env: NodeJS.ProcessEnv): number {
  const arg = env.OTEL_TRACES_SAMPLER_ARG
  const ratio = arg === undefined ? Number.NaN : Number(arg)
  return ratio >= 0 && ratio <= 1 ? ratio : 1
}

export function isProtocol(name: string): name is TracingProtocol {
  return protocols.some((offered) => offered === name)
}

export function isSamplerName(name: string): name is SamplerName {
  return samplerNames.some((offered) => offered === name)
}

/**
 * What is wrong with the tracing environment, when tracing is on: an OTLP protocol or a sampler
 * tollgate does not offer (a key that is set wins over its variable, so only an unset key's
 * variable is looked at). Read with the config (`tollgate config check` sees it), not only at start.
 */
export function tracingEnvProblems(config: TracingConfig, env: NodeJS.ProcessEnv): string[] {
  if (!isTracingOn(config, env)) return []
  const problems: string[] = []
  const protocol = tracingProtocolOf(config, env)
  if (!isProtocol(protocol)) {
    problems.push(`OTEL_EXPORTER_OTLP_PROTOCOL: ${protocol} is not offered: use http/protobuf or http/json`)
  }
  const sampler = samplerNameOf(env)
  if (config.sampleRatio === undefined && !isSamplerName(sampler)) {
    problems.push(`OTEL_TRACES_SAMPLER: ${sampler} is not one tollgate offers: ${samplerNames.join(', ')}`)
  }
  return problems
}
