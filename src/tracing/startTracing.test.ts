import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import type { TracingConfig } from '../config/tracingSchema.ts'
import { startTracing } from './startTracing.ts'

/** The lines tracing's start logs, read back as JSON (pino writes to the stream as it logs). */
async function startLines(config: TracingConfig, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  const tracing = startTracing(config, log, env)
  await tracing.close()
  return lines.filter((line) => String(line.msg).startsWith('tracing on'))
}

describe('startTracing: the tracing on line', () => {
  it('names the config endpoint without its credentials, the protocol and the sample ratio', async () => {
    const lines = await startLines(
      {
        endpoint: 'https://collector-user:s3cret@collector.example:4318/otlp/',
        protocol: 'http/json',
        sampleRatio: 0.25,
        serviceName: 'tollgate-eu',
      },
      {},
    )
    assert.equal(lines.length, 1)
    const [line] = lines
    assert.equal(line?.level, 30) // info
    assert.equal(line?.endpoint, 'https://…@collector.example:4318/otlp/v1/traces')
    assert.equal(line?.protocol, 'http/json')
    assert.equal(line?.sampler, 'parentbased_traceidratio')
    assert.equal(line?.ratio, 0.25)
    assert.equal(line?.trustCallerSampling, false)
    assert.equal(line?.serviceName, 'tollgate-eu')
    assert.doesNotMatch(JSON.stringify(line), /s3cret|collector-user/)
  })

  it('reads what the config leaves to the environment as the exporter does, the query hidden', async () => {
    const [traces] = await startLines(
      { trustCallerSampling: true },
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces?api-key=xyz',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.5',
      },
    )
    assert.equal(traces?.endpoint, 'http://collector:4318/custom/traces?…')
    assert.doesNotMatch(JSON.stringify(traces), /xyz/)
    assert.equal(traces?.protocol, 'http/json')
    assert.equal(traces?.sampler, 'traceidratio')
    assert.equal(traces?.ratio, 0.5)
    assert.equal(traces?.trustCallerSampling, true)

    const [base] = await startLines({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })
    assert.equal(base?.endpoint, 'http://collector:4318/v1/traces')
    assert.equal(base?.protocol, 'http/protobuf')
    assert.equal(base?.sampler, 'parentbased_always_on')
    assert.equal(base?.ratio, undefined)

    const [unnamed] = await startLines({ enabled: true }, { OTEL_TRACES_SAMPLER: 'always_off' })
    assert.equal(unnamed?.endpoint, 'http://localhost:4318/v1/traces')
    assert.equal(unnamed?.sampler, 'always_off')
  })
})
