import type { Logger } from 'pino'
import type { Config } from '../config/configSchema.ts'
import { isTracingOn } from '../config/tracingEnv.ts'
import type { RequestTracing } from '../pipeline/RequestTrace.ts'

/** The traces' SDK, when tracing is on. */
export type TracingStage = {
  /** What starts each request's trace; undefined when tracing is off. */
  tracing: RequestTracing | undefined
  /** Sends the spans still queued (a stop's last step: after the drain, its spans are sent too). */
  close(): Promise<void>
}

/** The first stage: the OpenTelemetry SDK, loaded (a dynamic import) only when tracing is on. */
export async function startTracingStage(config: Config, log: Logger): Promise<TracingStage> {
  if (!isTracingOn(config.tracing)) return { tracing: undefined, close: async () => {} }
  const { startTracing } = await import('../tracing/startTracing.ts')
  return startTracing(config.tracing, log)
}
